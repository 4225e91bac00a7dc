"""Contract verification of a worker class in its own environment (the runtime imports it
as a library), and what the builder requires by default."""
