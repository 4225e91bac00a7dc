"""The chains of calls that lead to a driver method, along calls whose receiver resolves.

`reach` matches a finding's callers by method name: `Policy.generate` is "called" from a
game's own `generate`. A claim that one recipe runs a finding must rest on calls that
resolve: walking back from the driver method, a call `x.m(...)` counts only where the
type of `x` is known and `m` on it is that very method (`self` in the class or one that
inherits it; a parameter annotated with a class; a local, or an attribute `self.a`,
every assignment of which builds one class; an attribute a class body annotates), a
plain call `f(...)` only where `f` names that function (in its module, imported, or a
nested function of the enclosing one). A receiver annotated with an interface, built
by a factory, or passed in unannotated does not resolve: the call is not followed.

A chain ends at an entry: a module-level function of a module whose entry functions
declare the whole config they run on (`entry_configs`), taking that config, that no
other such function calls (`validate` is run by `grpo_train`: the chain goes on up).
Each link keeps the config tests its guards are wholly made of (`interpret.conditions.
whole_tests`: enclosing `if`s, early exits, `assert`s before the call) and, as text, the
guards that are not, so a config-scoped `check` judges each chain on its config later
(`chain_verdict`). Plain data: the report that holds chains is cached by content.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from nemo_rl_workers.interpret.conditions import ConfigTest, whole_tests
from nemo_rl_workers.interpret.inline import bind, helper_of, inlined, substituted
from nemo_rl_workers.tree.entry_configs import MIN_BLOCKS, block_count, class_named
from nemo_rl_workers.tree.source import (
    CallSite,
    ClassInfo,
    Function,
    Guard,
    Resolver,
    SourceTree,
    resolve_fqn,
)
from nemo_rl_workers.tree.source.imports import function_imports, is_package_file
from nemo_rl_workers.tree.source.resolve import dotted_name

MAX_LINKS = 8  # calls in one chain, the driver's own included
MAX_CHAINS = 12  # chains kept per driver method
MAX_VISITS = 400  # functions walked back from one driver method (a hub of calls)
MAX_TYPE_DEPTH = 4  # `self.a.b.c` followed this far
MAX_TEXT = 80


@dataclass(frozen=True)
class Link:
    """One call on the way: where it is made (file:line), in which function (qualname),
    the config tests its guards are made of, and the guards that are not config tests."""

    where: str
    function: str
    tests: tuple[ConfigTest, ...] = ()
    undecided: tuple[str, ...] = ()  # "file:line test" of each guard the config cannot decide
    # The receiver, where a factory built it: "sync from factory.py:12 create_sync".
    built: str = ""


@dataclass(frozen=True)
class Chain:
    """Calls from an entry (first) down to the driver's call of the worker method (last)."""

    links: tuple[Link, ...]

    @property
    def entry_file(self) -> str:
        return self.links[0].where.rpartition(":")[0]

    def text(self) -> str:
        """`grpo.py:1602 grpo_train -> lm_policy.py:434 Policy.x`: each call by its file's
        last name and line, and the function it is made in."""
        return " -> ".join(
            f"{_short_where(link.where)} {link.function}"
            + (f" [{link.built}]" if link.built else "") for link in self.links)


def _more(count: int) -> str:
    return f", and {count - 1} more call{'s' if count > 2 else ''} by that name" \
        if count > 1 else ""


def _short_where(where: str) -> str:
    file, _, line = where.rpartition(":")
    return f"{file.rsplit('/', 1)[-1]}:{line}"


@dataclass(frozen=True)
class _Built:
    """A receiver a factory built: the factory's `return Cls(...)` that chose its class,
    the factory, the call of it, and the function that call is in."""

    site: CallSite
    factory: Function
    call: ast.Call
    context: Function


@dataclass
class CallChains:
    """Walks back from driver methods to entries over the tree's resolved calls."""

    tree: SourceTree
    resolver: Resolver
    # module -> the top-level keys its entry config requires (None: it declares none)
    entry_keys: Callable[[str], tuple[str, ...] | None]
    _by_name: dict[str, list[CallSite]] = field(default_factory=dict)
    _indexed: int = 0
    _asked: set[str] = field(default_factory=set)
    _attribute_types: dict[tuple[str, str], ClassInfo | None] = field(default_factory=dict)
    _entry: dict[tuple[str, str], bool] = field(default_factory=dict)
    _callers: dict[tuple[str, str], list[tuple[CallSite, Function]]] = field(
        default_factory=dict)
    # (call, target) -> the factories that built the receiver it resolves through
    _built: dict[tuple[int, int], list[_Built]] = field(default_factory=dict)
    _by_function: dict[tuple[str, str], list[CallSite]] = field(default_factory=dict)
    _imports: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def chains(self, function: Function,
               dispatch: CallSite | None) -> tuple[tuple[Chain, ...], str]:
        """The chains from an entry to `dispatch` (the driver's call, in `function`), and
        where the walk back first stopped, in words ("" where it did not)."""
        first = self._link(dispatch, function) if dispatch is not None else Link(
            function.where, function.qualname)
        found: list[Chain] = []
        gaps: list[str] = []
        visits = [0]
        self._back(function, (first,), {id(function)}, found, gaps, visits)
        return tuple(found), (gaps[0] if gaps else "")

    def _back(self, function: Function, below: tuple[Link, ...], on_path: set[int],
              found: list[Chain], gaps: list[str], visits: list[int]) -> None:
        visits[0] += 1
        if len(found) >= MAX_CHAINS or visits[0] > MAX_VISITS:
            return
        callers = self.callers_of(function)
        if self._is_entry(function) and not any(self._is_entry(g) for _, g in callers):
            found.append(Chain(below))
            return
        unsure = self._unsure(function)
        if unsure or not callers:
            gaps.append(self._gap(function, unsure))
        if len(below) >= MAX_LINKS:
            return
        for call, caller in callers:
            if id(caller) in on_path:
                continue
            self._back(caller, (self._link(call, caller), *below), on_path | {id(caller)},
                       found, gaps, visits)

    def _gap(self, function: Function, unsure: list[CallSite]) -> str:
        """Where the walk back may miss a route to `function`: its first call by name
        that may be it but does not resolve (and what the receiver is declared as), or,
        with no call of it at all, that it may be run as a value (`tasks[k] = f`)."""
        if not unsure:
            return (f"{function.qualname} ({function.where}) is not called by name where a "
                    "call resolves; it may be run as a value")
        call = unsure[0]
        func = call.node.func
        owner = self._owner(function)
        if isinstance(func, ast.Attribute) and owner is not None:
            declared = self._declared(func.value, call)
            return (f"{call.where} calls {_unparsed(func)} on {_unparsed(func.value)}, "
                    f"not known to be a {owner.name}{declared}" + _more(len(unsure)))
        return f"{call.where} {_unparsed(func)}(...) is not known to call " \
               f"{function.qualname} ({function.where})" + _more(len(unsure))

    def _declared(self, node: ast.expr, call: CallSite) -> str:
        """` (annotated X)` for a parameter receiver with an annotation, else ""."""
        function = self.tree.function_of(call)
        if not isinstance(node, ast.Name) or function is None:
            return ""
        for scope in self._scopes(function):
            param = next((p for p in scope.params if p.name == node.id), None)
            if param is not None:
                return f" (annotated {param.annotation})" if param.annotation else \
                    " (a parameter with no annotation)"
            if node.id in scope.assignments:
                return ""
        return ""

    def _link(self, call: CallSite, function: Function) -> Link:
        tests: list[ConfigTest] = []
        undecided: list[str] = []
        for guard in call.guards:
            written = Guard(inlined(guard.test, function, self.tree), guard.holds)
            whole = whole_tests(written, function, call.file)
            if whole is None:
                undecided.append(f"{call.file}:{guard.test.lineno} "
                                 f"{'' if guard.holds else 'not '}"
                                 f"{_unparsed(guard.test)}")
            else:
                tests.extend(whole)
        built = [b for (c, _), found in self._built.items() if c == id(call) for b in found]
        for item in built:  # the guards under which the factory builds that class
            bound = bind(item.factory, item.call)
            for guard in item.site.guards:
                test = substituted(guard.test, item.factory, self.tree, bound) \
                    if bound is not None else None
                whole = whole_tests(Guard(inlined(test, item.context, self.tree), guard.holds),
                                    item.context, item.site.file) if test is not None else None
                if whole is None:
                    undecided.append(f"{item.site.file}:{guard.test.lineno} "
                                     f"{'' if guard.holds else 'not '}"
                                     f"{_unparsed(guard.test)}")
                else:
                    tests.extend(whole)
        shown = "; ".join(f"{_unparsed(call.node.func.value)} from "
                          f"{_short_where(b.site.where)} {b.factory.qualname}"
                          for b in built[:1] if isinstance(call.node.func, ast.Attribute))
        return Link(call.where, function.qualname, tuple(dict.fromkeys(tests)),
                    tuple(dict.fromkeys(undecided)), shown)

    # -- entries ---------------------------------------------------------------------

    def _is_entry(self, function: Function) -> bool:
        """A module-level function of an entry module that takes its whole config."""
        key = (function.module, function.qualname)
        if key not in self._entry:
            self._entry[key] = self._takes_whole_config(function)
        return self._entry[key]

    def _takes_whole_config(self, function: Function) -> bool:
        if "." in function.qualname or self.entry_keys(function.module) is None:
            return False
        module = self.tree.module(function.module)
        for param in function.params:
            info = class_named(self.tree, module, param.annotation)
            if info is not None and _whole_config(self.tree, info):
                return True
        return False

    # -- resolved callers ----------------------------------------------------------------

    def callers_of(self, function: Function) -> list[tuple[CallSite, Function]]:
        """The calls of `function` that resolve to it, each with the function it is in."""
        key = (function.module, function.qualname)
        if key not in self._callers:
            found = [(c, g) for c in self._named(function.name)
                     if (g := self.tree.function_of(c)) is not None
                     and self._resolves_to(c, g, function)]
            # In source order, whatever order the modules were modelled in: the same
            # chains, and the same first gap, on every run.
            self._callers[key] = sorted(found, key=lambda pair: (pair[0].file, pair[0].line))
        return self._callers[key]

    def _unsure(self, function: Function) -> list[CallSite]:
        """Calls by `function`'s name that neither resolve to it nor, for certain, to
        something else: a receiver of no known type, a name a local may rebind."""
        resolved = {id(c) for c, _ in self.callers_of(function)}
        owner = self._owner(function)
        out: list[CallSite] = []
        for call in self._named(function.name):
            caller = self.tree.function_of(call)
            if id(call) in resolved:
                continue
            func = call.node.func
            if isinstance(func, ast.Attribute) and owner is not None:
                # A receiver declared as a base of the method's class (an interface) may
                # hold that class; one of an unrelated class does not.
                declared = self.type_of(func.value, caller, 0) if caller is not None else None
                if declared is None or declared in self.resolver.mro(owner).classes:
                    out.append(call)
            elif isinstance(func, ast.Name) and owner is None and caller is not None:
                if any(func.id in scope.assignments or any(p.name == func.id
                                                           for p in scope.params)
                       for scope in self._scopes(caller)):
                    out.append(call)
        return sorted(out, key=lambda c: (c.file, c.line))  # the same first one, however modelled

    def _named(self, name: str) -> list[CallSite]:
        """Calls `x.<name>(...)` and `<name>(...)`; pending modules holding one are
        modelled first."""
        if name not in self._asked:
            self._asked.add(name)
            needle = f"{name}("
            for module in [m for m, (_, text) in self.tree.pending.items() if needle in text]:
                self.tree.module(module)
            self._index_new()
        return self._by_name.get(name, [])

    def _index_new(self) -> None:
        """Index the calls modelled since the last time, by name and by function."""
        for call in self.tree.calls[self._indexed:]:
            called = _called_name(call.node.func)
            if called is not None:
                self._by_name.setdefault(called, []).append(call)
            if call.function is not None:
                self._by_function.setdefault((call.module, call.function), []).append(call)
        self._indexed = len(self.tree.calls)

    def _resolves_to(self, call: CallSite, caller: Function, target: Function) -> bool:
        func = call.node.func
        owner = self._owner(target)
        if isinstance(func, ast.Name):
            return owner is None and self._names_function(func.id, call, caller, target)
        if not isinstance(func, ast.Attribute):
            return False
        if owner is None:  # `module.f(...)`
            module = self.tree.module(call.module)
            return isinstance(func.value, ast.Name) and module is not None and \
                module.imports.get(func.value.id) == target.module
        def calls_target(info: ClassInfo) -> bool:
            found = self.resolver.find_method(info, func.attr)
            return found is not None and found[0] is target

        built: list[_Built] = []
        receiver = self.type_of(func.value, caller, 0, calls_target, built)
        if receiver is None or not calls_target(receiver):
            return False
        if built:
            self._built[(id(call), id(target))] = built
        return True

    def _owner(self, function: Function) -> ClassInfo | None:
        """The top-level class a method is defined in (None: a function)."""
        head, _, rest = function.qualname.partition(".")
        if not rest or "." in rest:
            return None
        module = self.tree.module(function.module)
        info = module.classes.get(head) if module is not None else None
        return info if info is not None and info.methods.get(rest) is function else None

    def _names_function(self, name: str, call: CallSite, caller: Function,
                        target: Function) -> bool:
        """Whether `name(...)` in `caller` calls `target`: the module's own function
        (not shadowed by a local), an imported one, or a function nested in an
        enclosing one."""
        if "." in target.qualname:  # nested: called from the function that holds it
            outer = target.qualname.rpartition(".")[0]
            return call.module == target.module and (
                caller.qualname == outer or caller.qualname.startswith(f"{outer}."))
        if name in caller.assignments or any(p.name == name for p in caller.params):
            return False
        if call.module == target.module:
            return name == target.name
        module = self.tree.module(call.module)
        return module is not None and module.imports.get(name) == \
            f"{target.module}.{target.name}"

    # -- receiver types ------------------------------------------------------------------

    def type_of(self, node: ast.expr, function: Function, depth: int,
                want: Callable[[ClassInfo], bool] | None = None,
                built: list[_Built] | None = None) -> ClassInfo | None:
        """The one class `node` holds in `function`, where the source tells it. A
        factory's result is the class its one `return Cls(...)` builds, or, where it
        builds several, the one `want` picks (each pick recorded in `built`)."""
        if depth > MAX_TYPE_DEPTH:
            return None
        if isinstance(node, ast.Name):
            return self._name_type(node.id, function, depth, want, built)
        if isinstance(node, ast.Attribute):
            holder = self.type_of(node.value, function, depth + 1)
            return self.attribute_type(holder, node.attr, depth + 1) if holder else None
        if isinstance(node, ast.Call):  # `Driver(...)`, or a factory's result
            return self._constructed(node.func, function) or self._from_factory(
                node, function, want, built)
        return None

    def _name_type(self, name: str, function: Function, depth: int,
                   want: Callable[[ClassInfo], bool] | None = None,
                   built: list[_Built] | None = None) -> ClassInfo | None:
        for scope in self._scopes(function):
            params = scope.params
            if params and params[0].name == name == "self" and "." in scope.qualname \
                    and not scope.is_static:
                return self._owner(scope)
            param = next((p for p in params if p.name == name), None)
            if param is not None:
                return self._annotated(param.annotation, scope)
            assigned = scope.assignments.get(name)
            if assigned:
                found: list[_Built] = []
                types = [self.type_of(a.value, scope, depth + 1, want, found)
                         for a in assigned]
                if types and all(t is not None for t in types) and \
                        len({id(t) for t in types}) == 1:
                    if built is not None:
                        built.extend(found)
                    return types[0]
                return None
        return None

    def _from_factory(self, call: ast.Call, function: Function,
                      want: Callable[[ClassInfo], bool] | None,
                      built: list[_Built] | None) -> ClassInfo | None:
        """The class a tree function called here returns, where every `return` of it
        builds a class: the one class, or the one `want` picks out of several."""
        factory = helper_of(call.func, function, self.tree)
        if factory is None:
            return None
        returns = [(site, info) for site in self._returned_calls(factory)
                   if (info := self._constructed(site.node.func, factory)) is not None]
        if not returns or len(returns) != len(self._returns(factory)):
            return None  # some `return` is not a constructor: the class is not told
        classes = {id(info): info for _, info in returns}
        picked = returns if len(classes) == 1 and want is None else [
            (site, info) for site, info in returns if want is not None and want(info)]
        if len({id(info) for _, info in picked}) != 1 or len(picked) != 1:
            return None  # none of them, or built at several returns: which one is not told
        site, info = picked[0]
        if built is not None:
            built.append(_Built(site, factory, call, function))
        return info

    def _returns(self, function: Function) -> list[ast.Return]:
        """The function's own `return`s (not those of functions nested in it)."""
        out: list[ast.Return] = []
        pending: list[ast.AST] = list(function.node.body)
        while pending:
            node = pending.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Lambda)):
                continue
            if isinstance(node, ast.Return):
                out.append(node)
            pending.extend(ast.iter_child_nodes(node))
        return out

    def _returned_calls(self, function: Function) -> list[CallSite]:
        """The call sites that are a `return`'s value, in the function."""
        values = {id(r.value) for r in self._returns(function) if r.value is not None}
        return [c for c in self._named_in(function) if id(c.node) in values]

    def _named_in(self, function: Function) -> list[CallSite]:
        self._index_new()
        return self._by_function.get((function.module, function.qualname), [])

    def _scopes(self, function: Function) -> Iterator[Function]:
        """The function, then each function it is nested in (its free names' scopes)."""
        qualname = function.qualname
        yield function
        while "." in qualname:
            qualname = qualname.rpartition(".")[0]
            outer = self.tree.functions.get((function.module, qualname))
            if outer is not None:
                yield outer

    def _annotated(self, annotation: str | None, function: Function) -> ClassInfo | None:
        if annotation is None:
            return None
        text = annotation.strip("\"'")
        for wrapper in ("Optional[", "typing.Optional["):
            if text.startswith(wrapper) and text.endswith("]"):
                text = text[len(wrapper):-1]
        parts = [p.strip() for p in text.split("|")]
        parts = [p for p in parts if p != "None"]
        if len(parts) != 1:
            return None
        return class_named(self.tree, self.tree.module(function.module), parts[0])

    def _constructed(self, func: ast.expr, function: Function) -> ClassInfo | None:
        name = dotted_name(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        for scope in self._scopes(function):  # a local alias is not the class
            if head in scope.assignments or any(p.name == head for p in scope.params):
                return None
            key = (scope.module, scope.qualname)
            if key not in self._imports:
                self._imports[key] = _local_imports(scope)
            imported = self._imports[key].get(head)
            if imported is not None:  # `from x import Cls` inside the function
                return resolve_fqn(self.tree, f"{imported}.{rest}" if rest else imported)
        return class_named(self.tree, self.tree.module(function.module), name)

    def attribute_type(self, holder: ClassInfo, attr: str, depth: int) -> ClassInfo | None:
        """The one class `holder().attr` holds: a class body's annotation of it, or what
        every `self.attr = ...` in the class's methods (and its bases') builds."""
        key = (holder.fqn, attr)
        if key in self._attribute_types:
            return self._attribute_types[key]
        self._attribute_types[key] = None  # a cycle through attributes resolves nothing
        found: ClassInfo | None = None
        values: list[tuple[ast.expr, Function]] = []
        for owner in self.resolver.mro(holder).classes:
            for statement in owner.node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(
                        statement.target, ast.Name) and statement.target.id == attr:
                    method = next(iter(owner.methods.values()), None)
                    if method is not None:
                        found = self._annotated(ast.unparse(statement.annotation), method)
                        if found is not None:
                            self._attribute_types[key] = found
                            return found
            for method in owner.methods.values():
                values.extend((value, method) for value in _self_assigned(method, attr))
        types = [self.type_of(value, method, depth + 1) for value, method in values]
        if types and all(t is not None for t in types) and len({id(t) for t in types}) == 1:
            found = types[0]
        self._attribute_types[key] = found
        return found


def _local_imports(function: Function) -> dict[str, str]:
    """Names the imports in a function's own body bind (`from pkg.mod import Cls [as C]`,
    relative ones too) -> their absolute names."""
    return function_imports(function.node, function.module, is_package_file(function.file))


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def _unparsed(node: ast.AST) -> str:
    """The expression as written, shortened; never raises on a deeply nested one."""
    try:
        return _shorten(ast.unparse(node))
    except RecursionError:
        return "an expression nested too deeply to show"


def _self_assigned(method: Function, attr: str) -> Iterator[ast.expr]:
    """The values `self.<attr> = value` assigns in a method's body."""
    if not method.params or method.params[0].name != "self":
        return
    for node in ast.walk(method.node):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == attr and \
                        isinstance(target.value, ast.Name) and target.value.id == "self":
                    yield node.value


def _whole_config(tree: SourceTree, info: ClassInfo) -> bool:
    """Whether a class is a whole config (its fields include config blocks): the test
    `entry_configs` makes."""
    return block_count(tree, info) >= MIN_BLOCKS


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


