"""Config schema, loading and the rules every config passes before resolution."""
