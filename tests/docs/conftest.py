from tests.docs.site_build import built_site  # noqa: F401  (the session's built docs site)
