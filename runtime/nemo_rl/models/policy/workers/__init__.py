"""Policy worker classes, one module per backend (imported by FQN, not from here)."""
