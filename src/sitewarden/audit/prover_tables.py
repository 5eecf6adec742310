"""The allow-lists of :mod:`.prover`: what startup code may call, read and change and still
be proved harmless, and how what it may not is said.  Names are canonical dotted names
(``os.path.join``; a builtin is ``builtins.len``).  Only exact names are allowed; patterns
(``subprocess.*``) only ever name what is refused, so that a module reached through
another (``os.path.os.system``) is never allowed by a prefix.  Module level: nothing.
"""


def words(text):
    return frozenset(text.split())


#: Attributes that reach into the interpreter (frames, code, namespaces, the import
#: machinery): reading one, or naming one to getattr/setattr or as a keyword, is high.
INTERNAL_ATTRS = words("""__dict__ __globals__ __builtins__ __code__ __closure__ __subclasses__
__import__ __loader__ __spec__ __reduce__ __reduce_ex__ __getattribute__ __self__ __func__
__bases__ __mro__ f_globals f_locals f_back f_builtins f_code gi_frame gi_code cr_frame cr_code
ag_frame ag_code tb_frame co_code co_consts co_names __kwdefaults__ __defaults__""")
#: Names that reach into the interpreter's namespaces.
INTERNAL_NAMES = words("""globals locals vars builtins __builtins__ __builtin__ __import__
__loader__ __spec__""")

#: Builtins proved harmless: name -> the type of what they return ("" unknown).
BUILTINS = {n: t for t, names in (
    ("int", "len int id hash ord"), ("str", "str repr ascii hex oct bin chr format"),
    ("bool", "bool isinstance issubclass callable hasattr any all"), ("float", "float"),
    ("list", "list sorted dir"), ("dict", "dict"), ("set", "set frozenset"),
    ("tuple", "tuple"), ("bytes", "bytes bytearray"), ("none", "print"),
    ("", """complex memoryview min max reversed enumerate zip range sum abs round divmod pow
    next slice object iter map filter super type aiter anext"""),
    ("prop", "property")) for n in names.split()}
#: Callables whose positional arguments are only looked at or copied from: a module or an
#: interpreter object passed to them goes nowhere (never one that may return an argument
#: itself: min, max, sum, next).
INSPECT = words("""builtins.len builtins.str builtins.repr builtins.ascii builtins.format
builtins.print builtins.isinstance builtins.issubclass builtins.callable builtins.hasattr
builtins.id builtins.hash builtins.bool builtins.type builtins.dir builtins.list
builtins.tuple builtins.sorted builtins.set builtins.frozenset builtins.dict
builtins.enumerate builtins.reversed builtins.zip builtins.any builtins.all builtins.iter
os.fspath""")

#: Standard-library callables proved harmless (pure, or reading only): name -> result type.
STDLIB = {n: t for t, names in (
    ("str", """os.path.abspath os.path.basename os.path.commonpath os.path.commonprefix
    os.path.dirname os.path.expanduser os.path.expandvars os.path.join os.path.normcase
    os.path.normpath os.path.realpath os.path.relpath os.getcwd os.fspath os.fsdecode
    os.getenv os.environ.get os.readlink sys.getfilesystemencoding sys.getdefaultencoding
    sys.getfilesystemencodeerrors sys.intern re.escape sysconfig.get_path
    sysconfig.get_python_version sysconfig.get_platform site.getusersitepackages
    site.getuserbase getpass.getuser locale.getpreferredencoding platform.python_version
    platform.python_implementation importlib.metadata.version string.capwords
    shutil.which time.strftime base64.b64encode os.path.splitroot"""),
    ("bool", """os.path.exists os.path.lexists os.path.isabs os.path.isdir os.path.isfile
    os.path.islink os.path.ismount os.path.samefile os.path.isjunction os.path.isdevdrive
    os.access os.isatty sys.is_finalizing dataclasses.is_dataclass"""),
    ("int", """os.getpid os.getppid os.getuid os.geteuid os.getgid os.getegid os.cpu_count
    os.path.getsize sys.getrecursionlimit sys.getsizeof sys.getrefcount os.getpgrp"""),
    ("float", """os.path.getmtime os.path.getatime os.path.getctime time.time
    time.monotonic time.perf_counter sys.getswitchinterval"""),
    ("tuple", "os.path.split os.path.splitext os.path.splitdrive sys.exc_info site.makepath"),
    ("list", "os.listdir os.getgroups site.getsitepackages pkgutil.extend_path re.findall"
             " re.split"),
    ("dict", "sysconfig.get_paths os.environ.copy"),
    ("bytes", "os.fsencode os.urandom"),
    ("match", "re.match re.search re.fullmatch"), ("pattern", "re.compile"),
    ("dirs", "os.scandir"),
    ("same", """functools.lru_cache functools.cache functools.total_ordering
    functools.cached_property contextlib.contextmanager dataclasses.dataclass
    abc.abstractmethod typing.overload typing.final typing.runtime_checkable
    typing.no_type_check enum.unique builtins.staticmethod builtins.classmethod"""),
    ("deco", "functools.wraps"), ("logger", "logging.getLogger"),
    ("lock", "threading.Lock threading.RLock"),
    ("cls", "collections.namedtuple typing.NamedTuple typing.NewType enum.Enum enum.IntEnum"),
    ("list", "sys.path.copy"), ("int", "sys.path.index sys.path.count"),
    ("str", "os.environ.__getitem__"), ("bool", "os.environ.__contains__"),
    ("", """os.stat os.lstat os.uname os.walk os.get_terminal_size os.environ.keys
    os.environ.values os.environ.items os.strerror sys.getwindowsversion
    sysconfig.get_config_var sysconfig.get_config_vars warnings.filterwarnings
    warnings.simplefilter warnings.warn warnings.resetwarnings warnings.catch_warnings
    functools.partial functools.reduce functools.cmp_to_key functools.singledispatch
    contextlib.suppress contextlib.nullcontext contextlib.closing dataclasses.field
    dataclasses.fields abc.ABCMeta typing.TypeVar typing.NewType typing.NamedTuple
    typing.TypedDict typing.Generic typing.Protocol
    collections.OrderedDict collections.defaultdict collections.deque collections.Counter
    collections.ChainMap re.sub re.subn re.finditer re.purge
    enum.Flag enum.IntFlag enum.auto types.SimpleNamespace types.MappingProxyType
    types.ModuleType codecs.lookup codecs.decode codecs.encode codecs.getdecoder
    codecs.getencoder base64.b64decode base64.urlsafe_b64decode base64.urlsafe_b64encode
    base64.b16decode base64.b16encode base64.b32decode base64.b32encode
    base64.standard_b64decode base64.decodebytes base64.encodebytes binascii.hexlify
    binascii.unhexlify binascii.crc32 itertools.chain itertools.islice itertools.count
    itertools.repeat itertools.cycle itertools.product itertools.permutations
    itertools.combinations itertools.groupby itertools.accumulate itertools.zip_longest
    itertools.takewhile itertools.dropwhile itertools.starmap itertools.filterfalse
    itertools.compress itertools.tee operator.itemgetter operator.add operator.eq
    operator.not_ operator.truth operator.contains math.floor math.ceil math.sqrt
    math.log math.isnan math.isinf time.localtime time.gmtime threading.Lock
    threading.local threading.get_ident threading.current_thread
    logging.NullHandler typing.cast pwd.getpwuid pwd.getpwnam grp.getgrgid
    importlib.invalidate_caches gc.collect gc.isenabled""")) for n in names.split()}

#: Positions (and keywords) of arguments that the callee calls: they must be proved callables.
CALLED_ARGS = {
    "builtins.map": (0,), "builtins.filter": (0,), "builtins.sorted": ("key",),
    "builtins.min": ("key",), "builtins.max": ("key",), "builtins.property": (
        0, 1, 2, "fget", "fset", "fdel"), "builtins.staticmethod": (0,),
    "builtins.classmethod": (0,), "functools.wraps": (0,), "functools.lru_cache": (0,),
    "functools.cache": (0,), "functools.partial": (0,), "functools.reduce": (0,),
    "functools.cmp_to_key": (0,), "functools.singledispatch": (0,),
    "functools.cached_property": (0,), "contextlib.contextmanager": (0,),
    "collections.defaultdict": (0, "default_factory"), "itertools.groupby": (1, "key"),
    "itertools.accumulate": (1, "func"), "itertools.takewhile": (0,),
    "itertools.dropwhile": (0,), "itertools.starmap": (0,), "itertools.filterfalse": (0,),
    "atexit.register": (0,), "signal.signal": (1,), "codecs.register": (0,),
    "sys.setrecursionlimit": (), "os.walk": ("onerror",), "json.loads": (
        "object_hook", "object_pairs_hook", "parse_float", "parse_int", "cls"),
    "json.load": ("object_hook", "object_pairs_hook", "parse_float", "parse_int", "cls"),
    "builtins.open": ("opener",), "io.open": ("opener",), "re.sub": (), "typing.cast": (),
}

#: Calls that change the process for every program it runs (medium): name -> effect.
EFFECTS = {
    "os.putenv": "sets an environment variable", "os.unsetenv": "unsets an environment variable",
    "os.environ.setdefault": "sets an environment variable",
    "os.environ.update": "sets environment variables",
    "os.environ.pop": "unsets an environment variable",
    "os.environ.popitem": "unsets an environment variable",
    "os.environ.clear": "unsets every environment variable",
    "os.environ.__setitem__": "sets an environment variable",
    "os.environ.__delitem__": "unsets an environment variable",
    "codecs.register": "registers a codec (codecs.register)",
    "atexit.register": "registers an exit handler (atexit.register)",
    "signal.signal": "installs a signal handler (signal.signal)",
    "sys.setrecursionlimit": "changes the recursion limit",
    "sys.setswitchinterval": "changes the thread switch interval",
    "sys.set_int_max_str_digits": "changes the integer string conversion limit",
    "os.chdir": "changes the working directory", "os.umask": "changes the file creation mask",
    "logging.basicConfig": "configures logging (logging.basicConfig)",
    "logging.disable": "disables logging", "logging.captureWarnings": "routes warnings to logging",
    "locale.setlocale": "changes the locale", "time.tzset": "changes the time zone",
    "gc.disable": "turns the garbage collector off", "gc.enable": "turns the garbage collector on",
    "gc.freeze": "freezes the garbage collector", "faulthandler.enable": "enables faulthandler",
    "sys.exit": "exits the interpreter", "builtins.exit": "exits the interpreter",
    "builtins.quit": "exits the interpreter", "os._exit": "exits the interpreter",
    "os.makedirs": "creates a directory", "os.mkdir": "creates a directory",
    "os.remove": "deletes a file", "os.unlink": "deletes a file",
    "os.rmdir": "deletes a directory", "os.rename": "renames a file",
    "os.replace": "renames a file", "os.chmod": "changes a file's mode",
    "os.symlink": "creates a link", "os.utime": "changes a file's times",
    "sys.stdout.reconfigure": "reconfigures sys.stdout",
    "sys.argv.append": "changes sys.argv", "sys.argv.extend": "changes sys.argv",
    "sys.argv.insert": "changes sys.argv", "sys.argv.remove": "changes sys.argv",
    "sys.argv.pop": "changes sys.argv", "sys.argv.clear": "changes sys.argv",
    "sys.stderr.reconfigure": "reconfigures sys.stderr",
}
#: Attributes of the interpreter that code may set with a medium effect (a hook must be a
#: proved callable); any other attribute of a module that is not proved code is high.
STORES = words("""sys.excepthook sys.displayhook sys.unraisablehook sys.breakpointhook
threading.excepthook sys.ps1 sys.ps2 sys.dont_write_bytecode sys.tracebacklimit
sys.pycache_prefix sys.stdout sys.stderr sys.stdin sys.argv warnings.showwarning
ssl.SSLContext ssl._create_default_https_context""")
#: What a store of :data:`STORES` changes, where its name does not say it.
STORE_NOTES = {"ssl.SSLContext": "changes how every program checks TLS certificates",
               "ssl._create_default_https_context": "changes how every program checks TLS "
                                                    "certificates"}

#: Values of the interpreter that are plain data: name -> type.
DATA = {n: t for t, names in (
    ("str", """os.sep os.altsep os.extsep os.pathsep os.linesep os.defpath os.devnull
    os.name os.curdir os.pardir sys.platform sys.version sys.executable sys.prefix
    sys.exec_prefix sys.base_prefix sys.base_exec_prefix sys.byteorder sys.abiflags
    sys.platlibdir os.path.sep string.ascii_letters string.ascii_lowercase
    string.ascii_uppercase string.digits string.hexdigits string.octdigits
    string.punctuation string.printable string.whitespace site.USER_SITE site.USER_BASE"""),
    ("int", """sys.hexversion sys.maxsize sys.maxunicode sys.api_version re.I re.IGNORECASE
    re.M re.MULTILINE re.S re.DOTALL re.X re.VERBOSE re.A re.ASCII re.U re.UNICODE
    os.O_RDONLY os.F_OK os.R_OK os.W_OK os.X_OK"""),
    ("tuple", "sys.version_info sys.implementation sys.flags sys.builtin_module_names"),
    ("bool", "typing.TYPE_CHECKING site.ENABLE_USER_SITE sys.dont_write_bytecode"),
    ("list", "sys.warnoptions"), ("stream", "sys.stdout sys.stderr"),
    ("", """typing.Any typing.Optional typing.Union typing.List typing.Dict typing.Tuple
    typing.Set typing.FrozenSet typing.Callable typing.Iterable typing.Iterator
    typing.Mapping typing.Sequence typing.Type typing.ClassVar typing.Final
    typing.Literal typing.AnyStr typing.Text typing.IO typing.TextIO typing.BinaryIO
    typing.Generator typing.MutableMapping collections.abc.Mapping
    collections.abc.MutableMapping collections.abc.Sequence collections.abc.Iterable
    collections.abc.Iterator collections.abc.Callable collections.abc.Set abc.ABC
    logging.DEBUG logging.INFO logging.WARNING logging.ERROR logging.CRITICAL"""))
    for n in names.split()}
#: Classes of the standard library that a proved class may derive from or use as metaclass.
BASES = words("""builtins.object builtins.type builtins.dict builtins.list builtins.str
builtins.int builtins.tuple builtins.set builtins.frozenset builtins.bytes builtins.float
abc.ABC abc.ABCMeta typing.NamedTuple typing.Generic typing.Protocol typing.TypedDict
enum.Enum enum.IntEnum enum.Flag enum.IntFlag collections.OrderedDict
collections.defaultdict collections.abc.Mapping collections.abc.MutableMapping
collections.abc.Sequence collections.abc.Iterable collections.abc.Iterator
collections.abc.Set logging.Handler logging.NullHandler logging.Filter logging.Formatter
ssl.SSLContext""")
#: Builtin types whose methods are all harmless.
DATA_TYPES = words("str bytes int float bool none list dict set tuple complex")
#: Methods of the other value types the prover tracks.
METHODS = {t: words(m) for t, m in (
    ("file", "read readline readlines close seek tell fileno isatty readable seekable "
             "writable __enter__ __exit__ __iter__ __next__ name write writelines flush "
             "truncate"),  # a file opened to read cannot write: the open is judged
    ("wfile", "read readline readlines close seek tell fileno isatty readable seekable "
              "writable __enter__ __exit__ __iter__ __next__ name write writelines flush "
              "truncate"),
    ("stream", "write flush isatty fileno writable"),
    ("pattern", "match search fullmatch findall finditer split sub subn"),
    ("match", "group groups groupdict start end span expand"),
    ("dirs", "close __enter__ __exit__ __iter__ __next__"),
    ("direntry", "is_dir is_file is_symlink stat inode is_junction"),
    ("prop", "setter getter deleter"),
    ("logger", "debug info warning warn error exception critical log setLevel isEnabledFor "
               "getEffectiveLevel getChild hasHandlers addHandler removeHandler addFilter"),
    ("lock", "acquire release locked __enter__ __exit__"))}
#: The interpreter's containers of strings only: copies and elements are plain strings.
STR_CONTAINERS = words("sys.path os.environ sys.argv sys.warnoptions sys.builtin_module_names")
#: Result types of str and bytes methods (others: the receiver's type).
STR_RESULTS = {m: t for t, names in (
    ("list", "split rsplit splitlines"), ("tuple", "partition rpartition"),
    ("bytes", "encode"), ("str", "decode"), ("int", "find rfind index rindex count"),
    ("bool", "startswith endswith isdigit isalpha isalnum isspace isidentifier islower "
             "isupper isascii isdecimal isnumeric isprintable istitle")) for m in names.split()}
#: Methods that harm no value they may be called on, whatever its type (a value of unknown
#: type never holds a module or an interpreter object: those cannot escape a proof).
PLAIN_METHODS = words("""get keys values items copy count index find rfind startswith endswith
strip lstrip rstrip split rsplit splitlines partition rpartition lower upper casefold join
encode decode format isdigit isalpha isalnum isspace isidentifier islower isupper zfill
ljust rjust center title removeprefix removesuffix append extend add discard setdefault
update pop insert remove clear sort reverse group groups groupdict""")

#: Standard-library modules whose functions read or compute data only, not each vetted:
#: calling one is medium ("not known to be harmless").
DATA_MODULES = words("""json math cmath datetime calendar decimal fractions statistics random
string textwrap fnmatch bisect heapq copy pprint reprlib difflib colorsys hashlib hmac
secrets zlib struct unicodedata ipaddress html stat numbers keyword pathlib glob
configparser email mimetypes shlex tomllib""")

#: Stdlib modules whose import alone does more than define names.
IMPORT_RUNS = {"antigravity": "opens a web browser", "idlelib.idle": "starts IDLE",
               "this": "", "__hello__": "", "__phello__": ""}

#: Refused outright, named by what they do: (patterns, text).
HIGH = (
    ("""builtins.exec builtins.eval builtins.compile builtins.execfile runpy.* code.* codeop.*
     *.exec_module *.load_module *.exec_source imp.* types.FunctionType types.CodeType
     types.LambdaType marshal.* pickle.* _pickle.* cPickle.* shelve.* dill.* cloudpickle.*
     timeit.* pdb.* bdb.* profile.* cProfile.* trace.* doctest.* logging.config.*
     pkgutil.resolve_name pkgutil.get_loader pkgutil.iter_modules pkgutil.walk_packages
     multiprocessing.* concurrent.futures.ProcessPoolExecutor zipimport.*
     importlib._bootstrap* importlib.reload importlib.metadata.entry_points *.entry_points
     builtins.breakpoint site.main site.execsitecustomize site.execusercustomize site.addpackage
     operator.attrgetter operator.methodcaller operator.call""", "runs data as code"),
    ("""subprocess.* _posixsubprocess.* os.system os.popen os.exec* os.spawn* os.posix_spawn*
     os.fork* os.startfile os.kill os.killpg pty.* platform.popen platform.* webbrowser.*
     asyncio.create_subprocess_* asyncio.subprocess.* commands.* popen2.* builtins.help""",
     "starts a process"),
    ("""socket.* _socket.* ssl.wrap_socket ssl.create_connection _ssl.* urllib.request.*
     urllib.urlopen http.client.* http.server.*
     httplib.* urllib2.* ftplib.* smtplib.* telnetlib.* poplib.* imaplib.* nntplib.*
     xmlrpc.* socketserver.* asyncio.open_connection asyncio.start_server""", "uses the network"),
    ("ctypes.* _ctypes.* cffi.* _cffi_backend.*", "calls foreign functions"),
    ("""inspect.* sys._getframe* sys.settrace sys.setprofile sys.addaudithook sys.modules*
     sys.call_tracing sys.monitoring.* sys._current_frames threading.settrace*
     threading.setprofile* gc.get_objects gc.get_referrers gc.get_referents builtins.globals
     builtins.locals builtins.vars builtins.__import__""",
     "reaches into interpreter internals"),
)
HIGH = tuple((tuple(p.split()), t) for p, t in HIGH)


def fits(name, patterns):
    """Does the dotted ``name`` fit one of ``patterns`` (``*``: any text)?"""
    for p in patterns:
        head, star, tail = p.partition("*")
        if not star:
            if name == p:
                return True
        elif name.startswith(head) and (len(name) > len(head) or not tail) and \
                (not tail or tail.replace("*", "") in name[len(head):]):
            return True
    return False


def judge(name):
    """``(severity, text, result type)`` of calling the standard library's ``name``:
    severity None when harmless, ``"medium"`` with an effect, ``"high"``."""
    short = name[9:] if name.startswith("builtins.") else name
    if name.startswith("builtins."):
        if short in BUILTINS:
            return None, "", BUILTINS[short]
        head = short.partition(".")[0]
        if "." in short and (head in BUILTINS or is_exception(head)) and \
                short.rpartition(".")[2] not in INTERNAL_ATTRS:
            return None, "", ""  # str.join, dict.fromkeys, object.__init__, ...
        if is_exception(short):
            return None, "", ""
    if name in STDLIB:
        return None, "", STDLIB[name]
    if name in EFFECTS:
        return "medium", EFFECTS[name], ""
    for patterns, text in HIGH:
        if fits(name, patterns):
            return "high", "%s: %s" % (text, short), ""
    if name.partition(".")[0] in DATA_MODULES:
        return "medium", "calls %s, not known to be harmless" % short, ""
    return "high", "calls %s, which is not on the audit's list of harmless calls" % short, ""


def is_exception(name):
    return name.endswith(("Error", "Exception", "Warning")) or name in (
        "BaseException", "KeyboardInterrupt", "SystemExit", "StopIteration",
        "StopAsyncIteration", "GeneratorExit", "NotImplemented", "Ellipsis")


#: Every attribute ``sys`` has on CPython 3.8 to 3.15 (``dir(sys)``, each release): setting
#: another one adds a name to the interpreter (medium), it replaces nothing.
SYS_NAMES = words("""
_base_executable _baserepl _clear_internal_caches _clear_type_cache _clear_type_descriptors
_current_exceptions _current_frames _deactivate_opcache _debugmallocstats _dump_tracelets
_framework _get_cpu_count_config _getframe _getframemodulename _getquickenedcount _git
_is_gil_enabled _is_immortal _is_interned _jit _setprofileallthreads _settraceallthreads
_stdlib_dir _xoptions abi_info abiflags activate_stack_trampoline addaudithook api_version
argv audit base_exec_prefix base_prefix breakpointhook builtin_module_names byteorder
call_tracing callstats copyright deactivate_stack_trampoline displayhook dont_write_bytecode
exc_info excepthook exception exec_prefix executable exit flags float_info float_repr_style
get_asyncgen_hooks get_coroutine_origin_tracking_depth get_coroutine_wrapper
get_int_max_str_digits get_lazy_imports get_lazy_imports_filter getallocatedblocks
getcheckinterval getdefaultencoding getdlopenflags getfilesystemencodeerrors
getfilesystemencoding getprofile getrecursionlimit getrefcount getsizeof getswitchinterval
gettrace getunicodeinternedsize hash_info hexversion implementation int_info intern
is_finalizing is_remote_debug_enabled is_stack_trampoline_active lazy_modules maxsize
maxunicode meta_path modules monitoring orig_argv path path_hooks path_importer_cache
platform platlibdir prefix pycache_prefix remote_exec set_asyncgen_hooks
set_coroutine_origin_tracking_depth set_coroutine_wrapper set_int_max_str_digits
set_lazy_imports set_lazy_imports_filter setcheckinterval setdlopenflags setprofile
setrecursionlimit setswitchinterval settrace stderr stdin stdlib_module_names stdout
thread_info unraisablehook version version_info warnoptions""")
