"""Generated Java workloads for the HotSpot target, and their compilation.

A seed picks the shape of one workload (how many recursion classes and how deep, how many
implementations behind the megamorphic call site, how often classes are loaded and methods
deoptimized); every workload has all the features the walker must survive:

  deep recursion through a ring of classes     lambdas and streams       exceptions unwinding
  interface and megamorphic calls              JNI calls into native code and back into Java
  class loading through fresh class loaders    deoptimization (unstable branch, new receiver)
  OSR loops                                    several worker threads

Every tracked method keeps the thread's shadow stack: it pushes its id on entry and pops it
in a `finally`, into a direct buffer the agent reads (layout in
native/agents/hotspot/wf_hs_stress.c).
The manifest `methods.txt` ("Lclass; name descriptor id" per line) tells the agent which
jmethodID is which shadow id. Workers are threads named "wf-N", the agent's targets.

Workloads are compiled with JDK 17's javac at --release 17 and run on any JDK >= 17; the
classes are cached under build/hotspot/workloads/<hash of the sources>/.
"""

from __future__ import annotations

import errno
import hashlib
import random
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UserError

JAVA_RELEASE = "17"
PACKAGE = "wf"
MAX_RECURSION = 400  # shadow buffer holds 4096 ids; recursion plus nesting stays far below


class WorkloadCompileError(UserError):
    """javac rejected a workload; the message carries javac's first error line."""


@dataclass(frozen=True)
class WorkloadShape:
    """The knobs a seed turns."""

    seed: int
    ring_classes: int  # recursion goes round a ring of this many classes
    max_depth: int  # deepest recursion
    shapes: int  # implementations behind the megamorphic interface call
    plugins: int  # classes loaded again and again through fresh loaders
    deopt_period: int  # every this many calls the rare receiver / branch is taken
    osr_iterations: int  # trip count of the OSR loop
    hold_period: int  # every this many recursions the leaf calls Agent.hold()

    @classmethod
    def from_seed(cls, seed: int) -> WorkloadShape:
        rnd = random.Random(seed)
        return cls(
            seed=seed,
            ring_classes=rnd.randint(2, 5),
            max_depth=rnd.randint(60, MAX_RECURSION),
            shapes=rnd.randint(4, 10),
            plugins=rnd.randint(1, 3),
            deopt_period=rnd.choice([257, 1031, 4099]),
            osr_iterations=rnd.choice([50_000, 200_000]),
            hold_period=rnd.choice([16, 32, 64]),
        )


@dataclass
class _Manifest:
    entries: list[tuple[str, str, str, int]] = field(default_factory=list)

    def track(self, klass: str, name: str, descriptor: str) -> int:
        shadow_id = len(self.entries) + 1
        self.entries.append((f"L{PACKAGE}/{klass};", name, descriptor, shadow_id))
        return shadow_id

    def text(self) -> str:
        # id 0: the shadow stack's own methods; a sample inside them is taken mid-update
        machinery = f"L{PACKAGE}/Shadow; push (I)I 0\nL{PACKAGE}/Shadow; pop (I)V 0\n"
        return machinery + "".join(f"{k} {n} {d} {i}\n" for k, n, d, i in self.entries)


def _line(code: str) -> str:
    """One statement of a method body, indented."""
    return f"            {code}\n"


def _tracked(shadow_id: int, body: str) -> str:
    """A method body that keeps the shadow stack around `body`."""
    return (
        f"        final Shadow sh = Shadow.get(); final int sd = sh.push({shadow_id});\n"
        f"        try {{\n{body}        }} finally {{ sh.pop(sd); }}\n"
    )


_FIXED_SOURCES = {
    "Agent.java": """package wf;
/** Natives implemented by the walkfuzz HotSpot agent (native/agents/hotspot/wf_hs_natives.c). */
public final class Agent {
    static native boolean register(java.nio.ByteBuffer shadow);
    static native void hold();
    static native int viaNative(java.util.function.IntUnaryOperator f, int x);
}
""",
    "Shadow.java": """package wf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
/** Per-thread shadow stack: [0] depth, [1..depth] ids bottom first; release stores. */
public final class Shadow {
    static final int CAP = 4096;
    static final VarHandle INT =
        MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    final ByteBuffer buf = ByteBuffer.allocateDirect(4 * CAP).order(ByteOrder.nativeOrder());
    int depth;
    public static Shadow get() { return ((Worker) Thread.currentThread()).shadow; }
    public int push(int id) {
        int d = depth;
        INT.set(buf, 4 * (d + 1), id);
        INT.setRelease(buf, 0, d + 1);
        depth = d + 1;
        return d;
    }
    public void pop(int d) { depth = d; INT.setRelease(buf, 0, d); }
}
""",
    "Plugin.java": """package wf;
/** Implemented by classes loaded through fresh class loaders (wf.plugin.*). */
public interface Plugin { int apply(int x); }
""",
    "Shape.java": """package wf;
/** The megamorphic call site's interface. */
interface Shape { int area(int x); }
""",
}


def _method(head: str, shadow_id: int, body: str) -> str:
    """A method whose body keeps the shadow stack; `head` is its declaration."""
    return f"    {head} {{\n{_tracked(shadow_id, body)}    }}\n"


def _class(head: str, *members: str, package: str = PACKAGE, imports: str = "") -> str:
    """The source file of one class: `head` is its declaration, then its members' text."""
    return f"package {package};\n{imports}{head} {{\n{''.join(members)}}}\n"


_WORKER_STATE = """    final Shadow shadow = new Shadow();
    final long millis, iterations;
    long rnd, result, done;
    boolean registered;
    Worker(int n, long millis, long iterations, long seed) {
        super("wf-" + n);
        this.millis = millis; this.iterations = iterations; this.rnd = seed * 2654435761L + 1;
    }
    int next() {
        rnd ^= rnd << 13; rnd ^= rnd >>> 7; rnd ^= rnd << 17; return (int) (rnd >>> 33);
    }
"""


def _worker(m: _Manifest, shape: WorkloadShape) -> str:
    run_id = m.track("Worker", "run", "()V")
    body = (
        "            registered = Agent.register(shadow.buf);\n"
        "            long end = System.nanoTime() + millis * 1_000_000L;\n"
        "            long i = 0;\n"
        "            while (iterations > 0 ? i < iterations : System.nanoTime() < end) {\n"
        "                result += Tasks.step(i, next()); i++;\n"
        "            }\n"
        "            done = i;\n"
    )
    return _class("final class Worker extends Thread", _WORKER_STATE,
                  _method("@Override public void run()", run_id, body))


def _tasks(m: _Manifest, shape: WorkloadShape) -> str:
    step_id = m.track("Tasks", "step", "(JI)I")
    body = (
        "            int pick = r % 100;\n"
        f"            if (pick < 30) return Rec0.down(r % {shape.max_depth},"
        f" (i % {shape.hold_period}) == 0);\n"
        "            if (pick < 45) return Streams.run(8 + r % 64);\n"
        "            if (pick < 55) return Exc.run(4 + r % 40);\n"
        "            if (pick < 70) return Poly.run(r);\n"
        "            if (pick < 80) return Jni.run(1 + r % 4);\n"
        "            if (pick < 98) return Deopt.run((int) i);\n"
        "            if (pick < 99 && r % 4 == 0) return Loading.run((int) i);\n"
        f"            return Osr.run({shape.osr_iterations} + r % 1000);\n"
    )
    return _class("final class Tasks", _method("static int step(long i, int r)", step_id, body))


def _ring(m: _Manifest, shape: WorkloadShape) -> dict[str, str]:
    files = {}
    n = shape.ring_classes
    for k in range(n):
        down_id = m.track(f"Rec{k}", "down", "(IZ)I")
        leaf_id = m.track(f"Rec{k}", "leaf", "(IZ)I")
        nxt = f"Rec{(k + 1) % n}"
        down = (
            f"            if (n <= 0) return leaf(n, hold);\n"
            f"            return {nxt}.down(n - 1, hold) + (n & 3);\n"
        )
        leaf = (
            "            if (hold) Agent.hold();\n"
            "            int s = 0; for (int j = 0; j < 16; j++) s += j * (n + 1);\n"
            "            return s;\n"
        )
        files[f"Rec{k}.java"] = _class(f"final class Rec{k}",
                                       _method("static int down(int n, boolean hold)", down_id,
                                               down),
                                       _method("static int leaf(int n, boolean hold)", leaf_id,
                                               leaf))
    return files


def _streams(m: _Manifest) -> str:
    run_id = m.track("Streams", "run", "(I)I")
    f_id = m.track("Streams", "f", "(I)I")
    g_id = m.track("Streams", "g", "(I)Z")
    run = (
        "            return java.util.stream.IntStream.range(0, n).map(x -> Streams.f(x))\n"
        "                .filter(x -> Streams.g(x)).boxed()\n"
        "                .collect(java.util.stream.Collectors.summingInt(x -> x));\n"
    )
    return _class("final class Streams",
                  _method("static int run(int n)", run_id, run),
                  _method("static int f(int x)", f_id, _line("return x * 31 + 7;")),
                  _method("static boolean g(int x)", g_id, _line("return (x & 1) == 0;")))


def _exceptions(m: _Manifest) -> str:
    run_id = m.track("Exc", "run", "(I)I")
    throw_id = m.track("Exc", "thrower", "(I)I")
    run = (
        "            try { return thrower(n); }\n"
        "            catch (IllegalStateException e) { return e.getMessage().length(); }\n"
    )
    thrower = (
        "            if (n <= 0) throw new IllegalStateException(\"bottom\");\n"
        "            return thrower(n - 1) + 1;\n"
    )
    return _class("final class Exc", _method("static int run(int n)", run_id, run),
                  _method("static int thrower(int n)", throw_id, thrower))


def _poly(m: _Manifest, shape: WorkloadShape) -> dict[str, str]:
    files = {}
    for k in range(shape.shapes):
        area_id = m.track(f"Shape{k}", "area", "(I)I")
        area = _line(f"return x * {k + 2} + {k};")
        files[f"Shape{k}.java"] = _class(f"final class Shape{k} implements Shape",
                                         _method("public int area(int x)", area_id, area))
    run_id = m.track("Poly", "run", "(I)I")
    news = ", ".join(f"new Shape{k}()" for k in range(shape.shapes))
    run = (
        "            int s = 0;\n"
        "            for (int j = 0; j < 32; j++) s += SHAPES[(r + j) % SHAPES.length].area(j);\n"
        "            return s;\n"
    )
    files["Poly.java"] = _class("final class Poly",
                                f"    static final Shape[] SHAPES = {{ {news} }};\n",
                                _method("static int run(int r)", run_id, run))
    return files


def _jni(m: _Manifest) -> str:
    run_id = m.track("Jni", "run", "(I)I")
    back_id = m.track("Jni", "back", "(I)I")
    run = _line("return Agent.viaNative(x -> Jni.back(x), n);")
    back = (
        "            if (x <= 0) return 1;\n"
        "            return Agent.viaNative(y -> Jni.back(y), x - 1) + 1;\n"
    )
    return _class("final class Jni", _method("static int run(int n)", run_id, run),
                  _method("static int back(int x)", back_id, back))


_LOADING_STATE = """    static final java.net.URL PLUGINS;
    static {
        try { PLUGINS = java.nio.file.Path.of(System.getProperty("wf.plugins")).toUri().toURL(); }
        catch (java.net.MalformedURLException e) { throw new IllegalStateException(e); }
    }
"""


def _loading(m: _Manifest, shape: WorkloadShape) -> tuple[str, dict[str, str]]:
    run_id = m.track("Loading", "run", "(I)I")
    run = (
        "            try (java.net.URLClassLoader loader = new java.net.URLClassLoader(\n"
        "                    new java.net.URL[] { PLUGINS }, Loading.class.getClassLoader())) {\n"
        f"                Class<?> c =\n"
        f"                    loader.loadClass(\"wf.plugin.Plugin\" + (i % {shape.plugins}));\n"
        "                Plugin p = (Plugin) c.getDeclaredConstructor().newInstance();\n"
        "                return p.apply(i);\n"
        "            } catch (ReflectiveOperationException | java.io.IOException e) {\n"
        "                throw new IllegalStateException(e);\n"
        "            }\n"
    )
    loading = _class("final class Loading", _LOADING_STATE,
                     _method("static int run(int i)", run_id, run))
    plugins = {}
    for k in range(shape.plugins):
        apply_id = m.track(f"plugin/Plugin{k}", "apply", "(I)I")
        apply = _line(f"return x * {k + 3};")
        plugins[f"Plugin{k}.java"] = _class(
            f"public final class Plugin{k} implements wf.Plugin",
            _method("public int apply(int x)", apply_id, apply),
            package=f"{PACKAGE}.plugin", imports="import wf.Shadow;\n")
    return loading, plugins


def _deopt(m: _Manifest, shape: WorkloadShape) -> dict[str, str]:
    run_id = m.track("Deopt", "run", "(I)I")
    common_id = m.track("DeoptCommon", "value", "(I)I")
    rare_id = m.track("DeoptRare", "value", "(I)I")
    unstable_id = m.track("Deopt", "unstable", "(I)I")
    run = (
        f"            DeoptBase b = (i % {shape.deopt_period} == {shape.deopt_period - 1})\n"
        "                ? new DeoptRare() : COMMON;\n"
        "            return b.value(i) + unstable(i);\n"
    )
    unstable = (
        f"            if (i % {shape.deopt_period * 4} == 3) return i / 3 + i % 7;\n"
        "            return i & 15;\n"
    )
    return {
        "DeoptBase.java": "package wf;\nabstract class DeoptBase { abstract int value(int x); }\n",
        "DeoptCommon.java": _class("final class DeoptCommon extends DeoptBase",
                                   _method("int value(int x)", common_id,
                                           _line("return x + 1;"))),
        "DeoptRare.java": _class("final class DeoptRare extends DeoptBase",
                                 _method("int value(int x)", rare_id, _line("return x - 1;"))),
        "Deopt.java": _class("final class Deopt",
                             "    static final DeoptBase COMMON = new DeoptCommon();\n",
                             _method("static int run(int i)", run_id, run),
                             _method("static int unstable(int i)", unstable_id, unstable)),
    }


def _osr(m: _Manifest) -> str:
    run_id = m.track("Osr", "run", "(I)I")
    body = (
        "            long s = 0;\n"
        "            for (int j = 0; j < n; j++) { s += (j ^ (s >>> 3)) * 31; }\n"
        "            return (int) s;\n"
    )
    return _class("final class Osr", _method("static int run(int n)", run_id, body))


_MAIN = """package wf;
public final class Main {
    /** args: threads millis iterations seed (iterations > 0: fixed work, else run for millis) */
    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long millis = Long.parseLong(args[1]);
        long iterations = Long.parseLong(args[2]);
        long seed = Long.parseLong(args[3]);
        Worker[] workers = new Worker[threads];
        for (int n = 0; n < threads; n++) {
            workers[n] = new Worker(n, millis, iterations, seed + n);
            workers[n].start();
        }
        long done = 0, registered = 0;
        for (Worker w : workers) { w.join(); done += w.done; if (w.registered) registered++; }
        System.out.println("wf-done iterations=" + done + " registered=" + registered);
    }
}
"""


@dataclass(frozen=True)
class Workload:
    """Sources of one generated workload, before compilation."""

    shape: WorkloadShape
    sources: dict[str, str]  # path relative to the source root -> text
    plugin_sources: dict[str, str]
    manifest: str

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for name, text in sorted({**self.sources, **self.plugin_sources}.items()):
            h.update(name.encode() + b"\0" + text.encode() + b"\0")
        h.update(self.manifest.encode())
        return h.hexdigest()[:16]


def generate(seed: int) -> Workload:
    """The workload of a seed: same seed, same sources."""
    shape = WorkloadShape.from_seed(seed)
    m = _Manifest()
    files = {f"wf/{name}": text for name, text in _FIXED_SOURCES.items()}
    files["wf/Main.java"] = _MAIN
    files["wf/Worker.java"] = _worker(m, shape)
    files["wf/Tasks.java"] = _tasks(m, shape)
    for name, text in {**_ring(m, shape), **_poly(m, shape), **_deopt(m, shape)}.items():
        files[f"wf/{name}"] = text
    files["wf/Streams.java"] = _streams(m)
    files["wf/Exc.java"] = _exceptions(m)
    files["wf/Jni.java"] = _jni(m)
    files["wf/Osr.java"] = _osr(m)
    loading, plugins = _loading(m, shape)
    files["wf/Loading.java"] = loading
    plugin_files = {f"wf/plugin/{name}": text for name, text in plugins.items()}
    return Workload(shape, files, plugin_files, m.text())


@dataclass(frozen=True)
class CompiledWorkload:
    """Where a compiled workload lives: classes on the class path, plugins off it."""

    seed: int
    root: Path
    classes: Path
    plugins: Path
    manifest: Path


def _write_tree(root: Path, files: dict[str, str]) -> list[Path]:
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return paths


def _javac(javac: Path, out: Path, sources: list[Path], classpath: Path | None,
           workload_dir: Path) -> None:
    argv = [str(javac), "--release", JAVA_RELEASE, "-nowarn", "-d", str(out)]
    if classpath is not None:
        argv += ["-cp", str(classpath)]
    proc = subprocess.run(argv + [str(s) for s in sources], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if "error" in ln] or proc.stderr.splitlines()
        first = lines[0] if lines else f"exit status {proc.returncode}"
        raise WorkloadCompileError(f"javac failed on workload in {workload_dir}: {first}")


def compile_sources(
    javac: Path, build_dir: Path, seed: int, sources: dict[str, str],
    plugin_sources: dict[str, str], manifest: str, digest: str,
) -> CompiledWorkload:
    """Compile (cached by digest) into build_dir/<digest>/; raises WorkloadCompileError.

    The workload is compiled in a private directory and renamed into place complete: tests
    on several JDKs run the same workload in parallel (xdist), and on a fresh clone each
    compiles it at the same moment; the first rename wins and the others use its result."""
    root = build_dir / digest
    done = root / "compiled.ok"
    result = CompiledWorkload(seed, root, root / "classes", root / "plugins",
                              root / "methods.txt")
    if done.exists():
        return result
    build_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{digest}.", dir=build_dir))
    try:
        _compile_into(staging, javac, sources, plugin_sources, manifest, digest, root)
        if root.exists() and not done.exists():
            shutil.rmtree(root, ignore_errors=True)   # left by a build killed half-way
        try:
            staging.rename(root)
        except OSError as err:
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not done.exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result


def _compile_into(out: Path, javac: Path, sources: dict[str, str],
                  plugin_sources: dict[str, str], manifest: str, digest: str,
                  workload_dir: Path) -> None:
    src = _write_tree(out / "src", sources)
    plugin_src = _write_tree(out / "plugin-src", plugin_sources)
    _javac(javac, out / "classes", src, None, workload_dir)
    if plugin_src:
        _javac(javac, out / "plugins", plugin_src, out / "classes", workload_dir)
    (out / "methods.txt").write_text(manifest)
    (out / "compiled.ok").write_text(digest + "\n")


def build(seed: int, javac: Path, build_dir: Path) -> CompiledWorkload:
    """Generate the workload of `seed` and compile it (cached)."""
    w = generate(seed)
    return compile_sources(javac, build_dir, seed, w.sources, w.plugin_sources, w.manifest,
                           w.digest)
