"""One config through the rules of a NeMo-RL tree (issue 45's checks/config): loading it as
its entry hands it on, the tree's own rules and world size, the revision's verdicts, and
the whole report kept."""
