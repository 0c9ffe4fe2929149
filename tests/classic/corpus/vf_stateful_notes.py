import verifiers as vf
from datasets import Dataset
from verifiers.types import Messages, State

NOTEBOOKS: dict[str, list[str]] = {}
EVENTS: list[str] = []


class NotesEnv(vf.StatefulToolEnv):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_tool(self.write_note, args_to_skip=["session_id"])
        self.add_tool(self.count_notes, args_to_skip=["session_id"])

    async def setup_state(self, state: State, **kwargs) -> State:
        session_id = f"s{len(NOTEBOOKS)}"
        NOTEBOOKS[session_id] = []
        state["session_id"] = session_id
        return await super().setup_state(state, **kwargs)

    def update_tool_args(self, tool_name: str, tool_args: dict, messages: Messages, state: State, **kwargs) -> dict:
        if tool_name in ("write_note", "count_notes"):
            tool_args["session_id"] = state["session_id"]
        return tool_args

    async def write_note(self, text: str, session_id: str) -> str:
        """Write a note into this session's notebook.

        Args:
            text: The note.

        Returns:
            A confirmation.
        """
        NOTEBOOKS[session_id].append(text)
        return f"saved note {len(NOTEBOOKS[session_id])}"

    async def count_notes(self, session_id: str) -> str:
        """Count the notes in this session's notebook.

        Returns:
            How many notes there are.
        """
        return str(len(NOTEBOOKS[session_id]))

    @vf.cleanup
    async def close_notebook(self, state: State):
        state["notes_written"] = len(NOTEBOOKS.pop(state["session_id"], []))

    @vf.teardown
    async def forget_everything(self):
        EVENTS.append("teardown")
        NOTEBOOKS.clear()


def notes_written(state, **kwargs) -> float:
    return float(state.get("notes_written", -1))


def mentions_answer(completion, answer, **kwargs) -> float:
    last = completion[-1]
    return 1.0 if last.role == "assistant" and answer in (last.content or "") else 0.0


def load_environment(max_turns: int = 3):
    rows = [
        {"question": f"Write a note saying '{word}' with write_note, then tell me what you wrote.", "answer": word}
        for word in ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    ]
    rubric = vf.Rubric(funcs=[mentions_answer, notes_written], weights=[1.0, 0.0])
    return NotesEnv(dataset=Dataset.from_list(rows), rubric=rubric, max_turns=max_turns)
