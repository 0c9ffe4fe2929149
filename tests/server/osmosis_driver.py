"""Drive a rollout server with osmosis-ai's own ``RolloutClient`` (run by the osmosis venv's
Python, so nothing of verifiers_lite is imported). Prints one JSON object of what it saw.

usage: osmosis_driver.py SERVER_URL FAST_MODEL_URL SLOW_MODEL_URL API_KEY
"""

from __future__ import annotations

import asyncio
import json
import sys

from osmosis_ai.rollout.client import RolloutClient, RolloutProtocolError


def _question(a: int) -> dict:
    return {
        "initial_messages": [{"role": "user", "content": f"What is {a} + {a + 1}?"}],
        "label": str(2 * a + 1),
    }


async def _status_of(call) -> int | str:
    try:
        await call
    except RolloutProtocolError as exc:
        return exc.status_code
    return "ok"


async def main(url: str, fast: str, slow: str, key: str) -> dict:
    seen: dict = {}
    async with asyncio.timeout(240):
        stranger = RolloutClient(url=url, api_key="not-the-key")
        seen["wrong_key_health"] = await _status_of(stranger.health())
        seen["wrong_key_rollout"] = await _status_of(
            stranger.run_rollout(chat_completions_url=fast, rollout_id="intruder", **_question(1))
        )
        await stranger.aclose()

        client = RolloutClient(url=url, api_key=key)
        seen["health_ok"] = "lifecycle" in await client.health()
        # Concurrent admissions: every other one carries extra_fields, the rest send null.
        results = await asyncio.gather(
            *(
                client.run_rollout(
                    chat_completions_url=fast,
                    rollout_id=f"r{i}",
                    **_question(i),
                    extra_fields={"echo": i} if i % 2 else None,
                )
                for i in range(10)
            )
        )
        seen["results"] = {
            r.rollout_id: {
                "status": getattr(r.status, "value", r.status),
                "reward": r.sample.reward,
                "metrics": r.sample.metrics,
            }
            for r in results
        }
        seen["duplicate"] = await _status_of(
            client.run_rollout(chat_completions_url=fast, rollout_id="r3", **_question(3))
        )

        # Cancel one that is running against a model that never answers in time.
        handle = await client.run_rollout_async(
            chat_completions_url=slow, rollout_id="doomed", **_question(2)
        )
        await handle.wait_for_running()
        seen["cancel"] = (await client.cancel_rollout("doomed")).dispositions
        seen["cancelled_status"] = getattr((await handle).status, "value", None)
        seen["cancel_unknown"] = (await client.cancel_rollout("never-sent")).dispositions

        idle = await client.wait_idle(timeout_sec=60, poll_interval_sec=0.1)
        seen["idle_active"] = idle["lifecycle"]["active_rollouts"]
        await client.aclose()
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:5]))))
