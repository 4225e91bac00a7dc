"""One cache for every answer the tool keeps between runs.

A content-keyed store of checksummed JSON entries (`store`), one file digest and its
stat-kept index (`digest`), one typed codec (`codec`) and typed keys (`key`): a computation
declares the frozen dataclass of its inputs and the type of its payload; its entry's key
is the digest of those inputs, so an input left out is a type error, never a stale answer.
Where the folder is by default is the library's (`folder`), not a command's.
"""
