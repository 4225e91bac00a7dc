"""Models: policy (training) and generation workers. Import-light: no torch here."""
