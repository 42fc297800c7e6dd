"""gpuprof's hooks for Python programs, loaded because the launcher puts this
directory first on PYTHONPATH (GPUPROF_MODE=tensor|native).

It imports nothing heavy: the PyTorch hooks are installed when the program
itself imports torch. Then the user's own sitecustomize, if any, runs as it
would have without gpuprof. Nothing here may break the program: every error
becomes one "gpuprof:" line on stderr."""
import os
import sys


def _gpuprof_say(msg):
    try:
        os.write(2, ("gpuprof: %s\n" % msg).encode("utf-8", "replace"))
    except OSError:
        pass


def _gpuprof_install():
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("GPUPROF_MODE") in ("tensor", "native"):
        try:
            sys.path.insert(0, here)
            import gpuprof_torch  # noqa: F401  (installs an import hook for torch)
        except Exception as e:  # never break the program
            _gpuprof_say("PyTorch hooks not installed: %r" % (e,))
        finally:
            if sys.path and sys.path[0] == here:
                del sys.path[0]
    # Chain to the sitecustomize the program would have had.
    saved = sys.path[:]
    mod = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path
                       if os.path.abspath(p or os.getcwd()) != here]
        import importlib
        try:
            importlib.import_module("sitecustomize")
        except ModuleNotFoundError as e:
            if e.name != "sitecustomize":
                raise
    except Exception as e:
        _gpuprof_say("the program's own sitecustomize failed: %r" % (e,))
    finally:
        sys.path[:] = saved
        if "sitecustomize" not in sys.modules and mod is not None:
            sys.modules["sitecustomize"] = mod


_gpuprof_install()
