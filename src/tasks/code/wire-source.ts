/**
 * The Python codec shared by the judge and the candidate harnesses (see judge-source.ts): how a value crosses
 * between the two sandboxes. A message is one frame — a 4-byte big-endian length, then `marshal` bytes — and a
 * value inside it is `(0, v)` when `marshal.dumps` takes `v` whole (builtin types only: marshal refuses
 * subclasses, so an object with a rigged `__eq__` cannot cross this way), else `(1, tree)`, a tagged tree:
 * scalars as themselves, containers as `(kind, items)`, builtin classes and pure builtin functions (`int`, `len`) by name, a few standard-library types rebuilt by tag (namedtuple →
 * tuple, Counter, OrderedDict, defaultdict, deque, Fraction, Decimal, range, bytearray; an iterator or generator
 * → an iterator over its items, at most ITEM_LIMIT of them), and anything else as `("h", id)`, a handle to an
 * object that stays where it was made. Decoding is strict: exact types, bounded size, depth and element count; no
 * code objects. `make_codec` takes the two handle functions, which differ between the sides.
 */
export const WIRE_SOURCE = String.raw`
import builtins as _builtins, collections as _collections, decimal as _decimal, fractions as _fractions, itertools as _itertools, marshal as _marshal, os as _os, types as _types

FRAME_LIMIT = 16 * 1024 * 1024
ITEM_LIMIT = 1000000
DEPTH_LIMIT = 200


class WireError(Exception):
    """A frame or value that breaks the format."""


def make_codec(handle_id, handle_obj):
    dumps, loads, read, write = _marshal.dumps, _marshal.loads, _os.read, _os.write
    SCALARS = frozenset((type(None), bool, int, float, complex, str, bytes))
    PLAIN = SCALARS | frozenset((list, tuple, dict, set, frozenset))
    Counter, OrderedDict, defaultdict, deque = _collections.Counter, _collections.OrderedDict, _collections.defaultdict, _collections.deque
    Fraction, Decimal, islice = _fractions.Fraction, _decimal.Decimal, _itertools.islice
    samples = (iter([]), iter(()), iter(""), iter(b""), iter({}), iter(set()), iter({}.values()), iter({}.items()), reversed([]), reversed(range(0)),
               map(id, []), filter(None, []), zip(), enumerate([]), iter(range(0)), _itertools.chain(), islice([], 0), _itertools.count(),
               _itertools.repeat(0), _itertools.cycle([]), _itertools.accumulate([]), _itertools.combinations([], 0), _itertools.permutations([]),
               _itertools.product(), _itertools.groupby([]), _itertools.starmap(id, []), _itertools.takewhile(id, []), _itertools.dropwhile(id, []),
               _itertools.zip_longest(), _itertools.compress([], []), _itertools.filterfalse(None, []), _itertools.combinations_with_replacement([], 0))
    ITERATORS = frozenset([type(x) for x in samples] + [_types.GeneratorType])
    MAPPINGS = {dict: "d", Counter: "C", OrderedDict: "O", defaultdict: "D"}
    SEQUENCES = {list: "l", tuple: "t", set: "s", frozenset: "f", deque: "q"}
    PURE = ("abs all any ascii bin callable chr divmod enumerate filter format hash hex id isinstance issubclass iter len map max min next oct "
            "ord pow repr reversed round sorted sum zip").split()
    BUILTINS = {name: item for name, item in vars(_builtins).items() if isinstance(item, type) or name in PURE}
    BUILDERS = {"l": list, "t": tuple, "s": set, "f": frozenset, "d": dict, "C": Counter, "O": OrderedDict, "D": defaultdict}

    def tag(value, depth, budget):
        budget[0] -= 1
        if budget[0] < 0 or depth > DEPTH_LIMIT:
            raise WireError("the value is too large or nested too deeply")
        kind = type(value)
        if kind in SCALARS:
            return value
        inner = depth + 1
        if kind in SEQUENCES:
            return (SEQUENCES[kind], [tag(item, inner, budget) for item in value])
        if kind in MAPPINGS:
            return (MAPPINGS[kind], [(tag(key, inner, budget), tag(item, inner, budget)) for key, item in value.items()])
        if kind is bytearray:
            return ("b", bytes(value))
        if kind is range:
            return ("r", value.start, value.stop, value.step)
        if kind is Fraction:
            return ("F", value.numerator, value.denominator)
        if kind is Decimal:
            return ("M", str(value))
        if isinstance(value, tuple) and hasattr(kind, "_fields"):
            return ("t", [tag(item, inner, budget) for item in tuple.__iter__(value)])
        if BUILTINS.get(getattr(value, "__name__", None)) is value:
            return ("B", value.__name__)
        if kind in ITERATORS:
            items = list(islice(value, ITEM_LIMIT + 1))
            if len(items) > ITEM_LIMIT:
                raise WireError("the iterator yields more than %d items" % ITEM_LIMIT)
            return ("i", [tag(item, inner, budget) for item in items])
        return ("h", handle_id(value))

    def untag(node, depth, budget):
        budget[0] -= 1
        if budget[0] < 0 or depth > DEPTH_LIMIT:
            raise WireError("a value too large or nested too deeply")
        kind = type(node)
        if kind in SCALARS:
            return node
        if kind is not tuple or len(node) < 2 or type(node[0]) is not str:
            raise WireError("a malformed value")
        name, inner = node[0], depth + 1
        if name in BUILDERS or name in ("q", "i"):
            if len(node) != 2 or type(node[1]) is not list:
                raise WireError("a malformed container")
            if name in ("d", "C", "O", "D"):
                pairs = []
                for pair in node[1]:
                    if type(pair) is not tuple or len(pair) != 2:
                        raise WireError("a malformed mapping")
                    pairs.append((untag(pair[0], inner, budget), untag(pair[1], inner, budget)))
                built = BUILDERS[name]()
                for key, item in pairs:
                    built[key] = item
                return built
            items = [untag(item, inner, budget) for item in node[1]]
            if name == "q":
                return deque(items)
            if name == "i":
                return iter(items)
            return BUILDERS[name](items)
        fields = node[1:]
        if name == "b" and len(fields) == 1 and type(fields[0]) is bytes:
            return bytearray(fields[0])
        if name == "r" and len(fields) == 3 and all(type(field) is int for field in fields):
            return range(*fields)
        if name == "F" and len(fields) == 2 and all(type(field) is int for field in fields) and fields[1] > 0:
            return Fraction(fields[0], fields[1])
        if name == "M" and len(fields) == 1 and type(fields[0]) is str and len(fields[0]) < 10000:
            return Decimal(fields[0])
        if name == "B" and len(fields) == 1 and type(fields[0]) is str and fields[0] in BUILTINS:
            return BUILTINS[fields[0]]
        if name == "h" and len(fields) == 1 and type(fields[0]) is int:
            return handle_obj(fields[0])
        raise WireError("a malformed value")

    def check_plain(value):
        # Iterative, so a hostile value cannot exhaust the stack; marshal's references may share or loop, which the
        # element budget bounds.
        budget = ITEM_LIMIT
        stack = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            budget -= 1
            kind = type(item)
            if budget < 0 or depth > DEPTH_LIMIT or kind not in PLAIN:
                raise WireError("a value of a type that may not cross, or too large")
            if kind in SCALARS:
                continue
            if kind is dict:
                for key, inner in item.items():
                    stack.append((key, depth + 1))
                    stack.append((inner, depth + 1))
            else:
                for inner in item:
                    stack.append((inner, depth + 1))

    def wire(value):
        try:
            dumps(value)
            return (0, value)
        except (ValueError, TypeError):
            return (1, tag(value, 0, [ITEM_LIMIT]))

    def unwire(node):
        if type(node) is not tuple or len(node) != 2 or type(node[0]) is not int:
            raise WireError("a malformed value")
        if node[0] == 0:
            check_plain(node[1])
            return node[1]
        if node[0] == 1:
            return untag(node[1], 0, [ITEM_LIMIT])
        raise WireError("a malformed value")

    def send(fd, message):
        data = dumps(message)
        data = len(data).to_bytes(4, "big") + data
        while data:
            data = data[write(fd, data):]

    def read_exactly(fd, size):
        chunks = []
        while size > 0:
            chunk = read(fd, min(size, 1 << 20))
            if not chunk:
                raise EOFError("the other side closed the link")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def receive(fd):
        size = int.from_bytes(read_exactly(fd, 4), "big")
        if size > FRAME_LIMIT:
            raise WireError("a frame of %d bytes, over the %d-byte limit" % (size, FRAME_LIMIT))
        data = read_exactly(fd, size)
        try:
            message = loads(data)
        except Exception:
            raise WireError("a frame that is not a value") from None
        if type(message) is not tuple or not message or type(message[0]) is not str:
            raise WireError("a malformed message")
        return message

    return wire, unwire, send, receive
`;
