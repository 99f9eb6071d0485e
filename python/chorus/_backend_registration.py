"""Registers "chorus" with torch.distributed, or, when the compiled backend cannot load, a
backend of the same name whose creation raises the loader's reason: init_process_group("chorus")
then says why, instead of torch's "Invalid backend: 'chorus'"."""
import glob
import os

import torch.distributed as dist


def _register_failure(reason):
    def _create_process_group(_options, _pg_options):
        raise RuntimeError(f"the torch.distributed backend 'chorus' is not available: {reason}")
    if "CHORUS" not in dist.Backend._plugins:
        dist.Backend.register_backend("chorus", _create_process_group, extended_api=True)


def register(have_runtime, runtime_error, package_dir, fix):
    if not have_runtime:
        if glob.glob(os.path.join(package_dir, "_rt*.so")):  # a build whose runtime does not load
            _register_failure(runtime_error)
        return
    try:
        from chorus import distributed
    except ImportError as error:
        built = glob.glob(os.path.join(package_dir, "_c10d*.so"))
        reason = (f"{built[0]} does not load: {error}; {fix}" if built else
                  f"this build has no chorus._c10d (configured without torch's C++ headers: "
                  f"bash scripts/install-deps.sh installs libtorch-dev, then rebuild)")
        _register_failure(reason)
        return
    distributed.register()
