"""A utils-style package beside vf_helper_imports; its own __init__ does not import verifiers."""
