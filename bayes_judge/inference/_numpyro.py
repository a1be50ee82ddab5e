"""NumPyro's NUTS on a declaration's PyMC model, with the data as arguments of one compiled program.

``pm.sample(nuts_sampler="numpyro")`` bakes every ``pm.Data`` into the JAX graph as a constant and
builds a new sampling loop at each call, so each fit traced and compiled again (MT-Bench
Dawid-Skene: 17.4 s first, 8.9 s refit, ``benchmarks/bench_dawid_skene.py`` at stop 17).  Here the
log density is jaxified once per cache entry with the ``pm.Data`` as inputs
(``pymc.sampling.jax.get_jaxified_graph``) and sampled by NumPyro's NUTS kernel
(``numpyro.infer.hmc.hmc``, the kernel ``numpyro.infer.NUTS`` runs) inside one ``jax.jit`` program:
warm-up and draws as two ``lax.scan`` loops, the chains vectorized by ``vmap``.  A refit with data
of the same shapes reuses the compiled program; new shapes (or new dimension lengths, which are
shape constants) compile a new one.

Other shared variables of the graph (the model's dimension lengths) stay constants, with their
values in the program's key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

__all__ = ["NumpyroSampler"]


@dataclass
class _Program:
    run: Any  # jitted (keys, x0, data) -> (z, stats...)
    post: Any  # jitted (z flat draws, data) -> stored variables
    n_traces: list[int] = field(default_factory=lambda: [0])


class NumpyroSampler:
    """NumPyro NUTS for one PyMC model; compiled programs kept per data shapes.

    Parameters
    ----------
    model : pymc.Model
        The declaration's model; its ``pm.Data`` values are read at every :meth:`sample`.
    stored : list of str
        The variables returned, by name (free variables and deterministics).
    """

    def __init__(self, model: Any, stored: list[str]) -> None:
        self.model = model
        self.stored = list(stored)
        self.programs: dict[tuple, _Program] = {}

    # -- the jaxified graphs -------------------------------------------------------------------
    def _key(self) -> tuple:
        data = [np.asarray(v.get_value(borrow=True)) for v in self.model.data_vars]
        dims = sorted((k, int(v.get_value())) for k, v in self.model.dim_lengths.items()
                      if hasattr(v, "get_value"))
        return tuple((d.shape, d.dtype.str) for d in data), tuple(dims)

    def _program(self) -> tuple[_Program, list[np.ndarray]]:
        key = self._key()
        data = [np.asarray(v.get_value(borrow=True)) for v in self.model.data_vars]
        prog = self.programs.get(key)
        if prog is None:
            prog = self.programs[key] = self._compile()
        return prog, data

    def _compile(self) -> _Program:
        import jax
        from numpyro.infer.hmc import hmc
        from pymc.sampling.jax import get_jaxified_graph
        from pytensor.graph.replace import graph_replace

        jax.config.update("jax_enable_x64", True)
        model = self.model
        shared = list(model.data_vars)
        syms = [v.type() for v in shared]
        value_vars = model.value_vars
        outs = model.replace_rvs_by_values([model[n] for n in self.stored])
        graphs = graph_replace([model.logp(jacobian=True), *outs], dict(zip(shared, syms, strict=True)),
                               strict=False)
        logp_fn = get_jaxified_graph(inputs=value_vars + syms, outputs=graphs[:1])
        post_fn = get_jaxified_graph(inputs=value_vars + syms, outputs=list(graphs[1:]))
        point = model.initial_point()
        shapes = [tuple(np.shape(point[v.name])) for v in value_vars]
        sizes = [int(np.prod(s)) for s in shapes]
        bounds = np.cumsum([0, *sizes])
        n_traces = [0]

        def split(x):
            return [x[bounds[i]:bounds[i + 1]].reshape(s) for i, s in enumerate(shapes)]

        def potential_gen(*data):
            def potential(x):
                n_traces[0] += 1  # Python runs only while JAX traces
                return -logp_fn(*split(x), *data)[0]
            return potential

        init_kernel, sample_kernel = hmc(potential_fn_gen=potential_gen, algo="NUTS")

        @partial(jax.jit, static_argnames=("tune", "draws", "target_accept"))
        def run(keys, x0, data, *, tune, draws, target_accept):
            def chain(key, x):
                state = init_kernel(x, tune, target_accept_prob=target_accept, model_args=data, rng_key=key)
                state, _ = jax.lax.scan(lambda s, _: (sample_kernel(s, model_args=data), None), state, None,
                                        length=tune)

                def draw(s, _):
                    s = sample_kernel(s, model_args=data)
                    return s, (s.z, s.diverging, s.num_steps, s.accept_prob, s.energy, s.adapt_state.step_size,
                               -s.potential_energy)

                return jax.lax.scan(draw, state, None, length=draws)[1]

            return jax.vmap(chain)(keys, x0)

        @jax.jit
        def post(z, data):
            return jax.vmap(lambda x: post_fn(*split(x), *data))(z)

        return _Program(run=run, post=post, n_traces=n_traces)

    # -- sampling ------------------------------------------------------------------------------
    def sample(self, start: dict[str, np.ndarray], *, chains: int, draws: int, tune: int, seed: int,
               target_accept: float) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Draws of the stored variables and NUTS statistics, each ``(chains, draws, ...)``.

        ``start`` holds every value variable's unconstrained start (by value-variable name); every
        chain starts there.
        """
        import jax

        prog, data = self._program()
        x0 = np.concatenate([np.ravel(start[v.name]) for v in self.model.value_vars]).astype(np.float64)
        keys = jax.random.split(jax.random.key(int(seed)), chains)
        z, div, n_steps, acc, energy, step, lp = prog.run(keys, np.tile(x0, (chains, 1)), data, tune=int(tune),
                                                          draws=int(draws), target_accept=float(target_accept))
        flat = prog.post(z.reshape((chains * draws, -1)), data)
        post = {n: np.asarray(v).reshape((chains, draws) + np.shape(v)[1:]) for n, v in zip(self.stored, flat,
                                                                                            strict=True)}
        n_steps = np.asarray(n_steps)
        stats = {"diverging": np.asarray(div), "n_steps": n_steps, "acceptance_rate": np.asarray(acc),
                 "energy": np.asarray(energy), "step_size": np.asarray(step), "lp": np.asarray(lp),
                 "tree_depth": np.floor(np.log2(np.maximum(n_steps, 1))).astype(int) + 1}
        return post, stats

    @property
    def n_traces(self) -> int:
        """How many times a log density was traced by JAX (compiles), over all programs."""
        return sum(p.n_traces[0] for p in self.programs.values())
