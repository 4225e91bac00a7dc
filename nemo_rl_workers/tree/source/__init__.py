"""Read a Python source tree as data, in one pass, importing and executing nothing.

The model (pyright-binder / pyflakes style) that `audit` and `verify --static` share:

- `read_tree(root, *, packages=None, stub_roots=(), eager=None) -> SourceTree`: walk
  `root` (a folder that would be on `sys.path`; only its top-level `packages` when
  given) and the stub folders, read each `.py`/`.pyi` file once through the guarded
  reader (regular files only, `MAX_SOURCE_BYTES`, no directory symlinks followed,
  UTF-8), parse it once, and fill the model. With `eager(text) -> bool`, a module it
  rejects stays in `tree.pending` and is modelled when `tree.module(name)` (and so
  name resolution) first asks for it. Unreadable or unparsable files become
  `SourceProblem`s in `tree.problems`; nothing raises.
- `SourceTree`: `modules` (dotted name -> `Module`), `classes` (FQN -> `ClassInfo`),
  `calls` (every `CallSite`), `functions` ((module, qualname) -> `Function`, nested
  ones too), `function_of(call)`, `module(name)` (models a pending module on first
  use), `pending`, `problems`, `files_read`, `roots`.
- `Module`: `name`, `file`, `is_package`, `imports` (local name -> absolute dotted
  name, relative imports resolved, `try/except ImportError` and `if TYPE_CHECKING`
  imports included), `classes`, `functions`, `assignments` (module-level `X = ...`).
- `ClassInfo`: `name`, `qualname`, `module`, `fqn`, `file`, `line`, `where`, `bases`
  (as written), `decorators`, `methods` (name -> `Function`), `attributes`, `node`.
- `Function`: `name`, `qualname`, `module`, `file`, `line`, `where`, `params`
  (`Param`: `name`, `kind`, `has_default`, `annotation`), `bound_params()` (without
  `self`), `takes_var_keyword`, `takes_var_positional`, `is_async`, `is_generator`,
  `is_async_generator`, `is_static`, `is_abstract`, `decorators`, `stub` (None, or
  "raise NotImplementedError" / "pass" / "..." / "docstring only"), `assignments`
  (local name -> `Assignment` list with their guards), `iterated` (local names the
  body iterates or passes to next/anext), `item_assignments` (key -> `Assignment` list
  of `d["key"] = value` in the body), `node`.
- `CallSite` (built `CallSite(node, module, file, line, cls, function, ...)`): `callee`
  (the called expression as written, computed on access), `node`, `module`, `file`,
  `line`, `where`, `cls` and `function` (enclosing qualnames), `guards` (`Guard`:
  `test` expression, `holds`: enclosing `if` tests and earlier early exits),
  `assigned_to`, `iterated`, `args`, `keyword(name)`.
- `Resolver(tree)`: `mro(info) -> Mro` (C3, cycle-safe: `classes`, `unknown` bases
  found neither in the tree nor the stubs, `problem`), `find_method(info, name)`,
  `has_attribute(info, name)`; `resolve_fqn(tree, fqn)`, `resolve_function(tree, fqn)`
  (a module-level function), `resolve_local(module,
  dotted)`, `base_names(tree, info)`.
- `demand_tree(roots)`: a `DemandTree`, a model that locates, reads and models a module
  only when name resolution first asks for it (one class and its bases, not a tree): the
  one model of classes outside a tree's (an extension, the runtime guard's subject);
  `absent` says why a module is not in it; `find_class(tree, fqn)` is the class or why not.
- The one import resolver: `absolute_module(importer, is_package, name, level)` (a
  relative import resolved as Python does, None above the top-level package),
  `import_bindings(stmt, importer, is_package)` (local name -> absolute name),
  `function_imports(node, ...)` (a function body's lazy imports).
- The one parser: `parse_text(text, file)`, `parse_file(path)` (through `read_source`):
  a syntax tree or a `SourceProblem` (`NotPython` for a syntax error), never an exception.
- `module_outline(file, module)` / `Outlines`: a module's imports and bindings as names, from one
  streaming pass (the static path follows imports across many modules with it);
  `module_imports(file, module)`.
- The import-path lookup shared with `verify --static`: `ImportRoots`, `Located`,
  `locate(module, roots)`.
"""

from typing import TYPE_CHECKING

from nemo_rl_workers.lazy import lazy_api

# name -> its module, loaded on first use: a caller that needs only the guarded reader
# or the import-path lookup does not load the whole model.
_API = {
    "Absent": "nemo_rl_workers.tree.source.demand",
    "DemandTree": "nemo_rl_workers.tree.source.demand",
    "demand_tree": "nemo_rl_workers.tree.source.demand",
    "find_class": "nemo_rl_workers.tree.source.demand",
    "absolute_module": "nemo_rl_workers.tree.source.imports",
    "function_imports": "nemo_rl_workers.tree.source.imports",
    "import_bindings": "nemo_rl_workers.tree.source.imports",
    "Outline": "nemo_rl_workers.tree.source.outline",
    "Outlines": "nemo_rl_workers.tree.source.outline",
    "module_imports": "nemo_rl_workers.tree.source.outline",
    "module_outline": "nemo_rl_workers.tree.source.outline",
    "NotPython": "nemo_rl_workers.tree.source.parse",
    "parse_file": "nemo_rl_workers.tree.source.parse",
    "parse_text": "nemo_rl_workers.tree.source.parse",
    "module_name": "nemo_rl_workers.tree.source.build",
    "read_tree": "nemo_rl_workers.tree.source.build",
    "stub_kind": "nemo_rl_workers.tree.source.build",
    "ImportRoots": "nemo_rl_workers.tree.source.lookup",
    "Located": "nemo_rl_workers.tree.source.lookup",
    "locate": "nemo_rl_workers.tree.source.lookup",
    "Assignment": "nemo_rl_workers.tree.source.model",
    "CallSite": "nemo_rl_workers.tree.source.model",
    "ClassInfo": "nemo_rl_workers.tree.source.model",
    "Function": "nemo_rl_workers.tree.source.model",
    "Guard": "nemo_rl_workers.tree.source.model",
    "Module": "nemo_rl_workers.tree.source.model",
    "Mro": "nemo_rl_workers.tree.source.model",
    "Param": "nemo_rl_workers.tree.source.model",
    "ParamKind": "nemo_rl_workers.tree.source.model",
    "SourceTree": "nemo_rl_workers.tree.source.model",
    "StubKind": "nemo_rl_workers.tree.source.model",
    "MAX_SOURCE_BYTES": "nemo_rl_workers.tree.source.reading",
    "SourceProblem": "nemo_rl_workers.tree.source.reading",
    "discover": "nemo_rl_workers.tree.source.reading",
    "read_source": "nemo_rl_workers.tree.source.reading",
    "Resolver": "nemo_rl_workers.tree.source.resolve",
    "base_names": "nemo_rl_workers.tree.source.resolve",
    "resolve_fqn": "nemo_rl_workers.tree.source.resolve",
    "resolve_function": "nemo_rl_workers.tree.source.resolve",
    "resolve_local": "nemo_rl_workers.tree.source.resolve",
}

if TYPE_CHECKING:
    from nemo_rl_workers.tree.source.build import module_name, read_tree, stub_kind
    from nemo_rl_workers.tree.source.demand import Absent, DemandTree, demand_tree, find_class
    from nemo_rl_workers.tree.source.imports import (
        absolute_module,
        function_imports,
        import_bindings,
    )
    from nemo_rl_workers.tree.source.lookup import ImportRoots, Located, locate
    from nemo_rl_workers.tree.source.model import (
        Assignment,
        CallSite,
        ClassInfo,
        Function,
        Guard,
        Module,
        Mro,
        Param,
        ParamKind,
        SourceTree,
        StubKind,
    )
    from nemo_rl_workers.tree.source.outline import (
        Outline,
        Outlines,
        module_imports,
        module_outline,
    )
    from nemo_rl_workers.tree.source.parse import NotPython, parse_file, parse_text
    from nemo_rl_workers.tree.source.reading import (
        MAX_SOURCE_BYTES,
        SourceProblem,
        discover,
        read_source,
    )
    from nemo_rl_workers.tree.source.resolve import (
        Resolver,
        base_names,
        resolve_fqn,
        resolve_function,
        resolve_local,
    )

__all__ = [
    "MAX_SOURCE_BYTES",
    "Absent",
    "Assignment",
    "CallSite",
    "DemandTree",
    "ClassInfo",
    "Function",
    "Guard",
    "ImportRoots",
    "Located",
    "Module",
    "Mro",
    "NotPython",
    "Outline",
    "Outlines",
    "Param",
    "ParamKind",
    "Resolver",
    "SourceProblem",
    "SourceTree",
    "StubKind",
    "absolute_module",
    "base_names",
    "demand_tree",
    "discover",
    "find_class",
    "function_imports",
    "import_bindings",
    "locate",
    "module_imports",
    "module_name",
    "module_outline",
    "parse_file",
    "parse_text",
    "read_source",
    "read_tree",
    "resolve_fqn",
    "resolve_function",
    "resolve_local",
    "stub_kind",
]

__getattr__ = lazy_api(__name__, globals(), _API)
