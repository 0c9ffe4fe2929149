"""The environments bundled with verifiers_lite, one module each with ``load_environment``;
registered under the ``verifiers_lite.environments`` entry point group like any installed
environment package."""
