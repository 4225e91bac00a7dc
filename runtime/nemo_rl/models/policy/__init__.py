"""Policy: the training side. Import-light: worker modules import torch themselves."""
