"""Static verification: worker classes judged against their Protocols from source by a type
checker, never imported, with the inputs and cache of its verdicts."""
