"""The memory models a run can choose, by name (``--memory-model``,
``explore(memory_model=...)``): symex's own and installed plug-ins' (:mod:`symex.plugins`).
The interface is :mod:`symex.core.memory.model`'s."""

from __future__ import annotations

from collections.abc import Callable

from symex.core.memory.forking import ForkingModel
from symex.core.memory.merged import MergedModel
from symex.core.memory.model import MemoryModel
from symex.errors import ConfigError
from symex.plugins import PluginKind, load_plugin, plugin_names

__all__ = ["DEFAULT_MEMORY_MODEL", "MEMORY_MODELS", "MEMORY_MODEL_NAMES", "make_memory_model",
           "memory_model_choices", "memory_model_name"]

#: each model's name and how it is made
MEMORY_MODELS: dict[str, Callable[[], MemoryModel]] = {
    "forking": ForkingModel,
    "merged": MergedModel,
}
#: the names a run takes, as messages and the docs list them
MEMORY_MODEL_NAMES = tuple(MEMORY_MODELS)
#: the model a run uses unless told otherwise
DEFAULT_MEMORY_MODEL = "forking"


def memory_model_choices() -> str:
    """The model names to choose from, for messages: symex's own, then plug-ins'."""
    return ", ".join((*MEMORY_MODEL_NAMES, *plugin_names(PluginKind.MEMORY_MODEL)))


def _maker(name: str) -> Callable[[], MemoryModel]:
    """How the memory model ``name`` is made (symex's own, or an installed plug-in's); a
    ConfigError lists the names to choose from."""
    if not isinstance(name, str):
        raise ConfigError(f"memory_model must be a model's name, not {name!r}; choose from "
                          f"{memory_model_choices()}")
    make = MEMORY_MODELS.get(name)
    if make is None:
        make = load_plugin(PluginKind.MEMORY_MODEL, name)
    if make is None:
        raise ConfigError(f"unknown memory model '{name}'; choose from {memory_model_choices()}")
    return make


def memory_model_name(name: str) -> str:
    """``name``, checked against :data:`MEMORY_MODELS` and the installed plug-ins."""
    _maker(name)
    return name


def make_memory_model(name: str) -> MemoryModel:
    """The memory model ``name`` (:data:`MEMORY_MODELS`, or an installed plug-in's)."""
    return _maker(name)()
