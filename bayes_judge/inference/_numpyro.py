"""NumPyro's NUTS on a declaration's PyMC model, with the data as arguments of one compiled program.

``pm.sample(nuts_sampler="numpyro")`` bakes every ``pm.Data`` into the JAX graph as a constant and
builds a new sampling loop at each call, so each fit traced and compiled again (MT-Bench
Dawid-Skene: 17.4 s first, 8.9 s refit, ``benchmarks/bench_dawid_skene.py`` at stop 17).  Here the
log density is jaxified once per cache entry with the ``pm.Data`` as inputs
(``pymc.sampling.jax.get_jaxified_graph``) and sampled by NumPyro's NUTS kernel
(``numpyro.infer.hmc.hmc``, the kernel ``numpyro.infer.NUTS`` runs) inside one ``jax.jit`` program:
warm-up and draws as one ``lax.fori_loop`` (the kernel adapts while its iteration count is below
the warm-up length, as in ``numpyro.infer.MCMC``'s own single loop), so that the NUTS transition
is traced and compiled once rather than once per phase (the same draws; a first fit compiles a
few tenths of a second sooner), the chains one after another (``lax.map``, as
``numpyro.infer.MCMC`` runs them on one CPU device).  Under ``vmap`` every chain ran each
transition as long as the longest tree of any chain, and the batching rules of NUTS's loops took
seconds to trace: MT-Bench Dawid-Skene, 4 chains, first fit 11.7 -> 7.6 s, a refit with another
seed 1.7 -> 1.2 s, one with new data 1.6 -> 2.0 s (``benchmarks/results/bench_dawid_skene.md``,
before and after that change).  A refit with data
of the same shapes reuses the compiled program; new shapes (or new dimension lengths, which are
shape constants) compile a new one.

Other shared variables of the graph (the model's dimension lengths) stay constants, with their
values in the program's key.  A model that declares ``padding`` dimensions
(:class:`~bayes_judge.generative.registry.ModelSpec`: Dawid-Skene's verdict patterns, whose count
changes with the data) has its data padded with rows of zeros along them, to the next of eight
sizes per octave (at most 1/8 more rows), so that refits of similar data reuse one program; the
padded rows add nothing to the log density and are cut from every output.
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
    logp: Any  # jitted (x, data) -> the log density (the Jacobians included)
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

    def __init__(self, model: Any, stored: list[str], padding: tuple[str, ...] = ()) -> None:
        self.model = model
        self.stored = list(stored)
        self.programs: dict[tuple, _Program] = {}
        dims = model.named_vars_to_dims
        free = {rv.name for rv in model.free_RVs}
        # a padded dimension must index data only: a free variable along it would change the start
        self.padding = tuple(p for p in padding if p in model.dim_lengths
                             and not any(p in dims.get(n, ()) for n in free))

    # -- the jaxified graphs -------------------------------------------------------------------
    def _lengths(self) -> dict[str, tuple[int, int]]:
        """Each padded dimension's (length, padded length)."""
        out = {}
        for dim in self.padding:
            n = int(self.model.dim_lengths[dim].get_value())
            step = 2 ** max(int(np.log2(max(n, 1))) - 3, 0)
            out[dim] = (n, -(-n // step) * step)
        return out

    def _program(self) -> tuple[_Program, list[np.ndarray], dict[str, tuple[int, int]]]:
        model, lengths = self.model, self._lengths()
        data = []
        for v in model.data_vars:
            x = np.asarray(v.get_value(borrow=True))
            widths = [(0, 0)] * x.ndim
            for ax, dim in enumerate(model.named_vars_to_dims.get(v.name, ())):
                if dim in lengths:
                    widths[ax] = (0, lengths[dim][1] - lengths[dim][0])
            data.append(np.pad(x, widths) if any(w for _, w in widths) else x)
        dims = sorted((k, lengths[k][1] if k in lengths else int(v.get_value()))
                      for k, v in model.dim_lengths.items() if hasattr(v, "get_value"))
        key = (tuple((d.shape, d.dtype.str) for d in data), tuple(dims))
        prog = self.programs.get(key)
        if prog is None:
            prog = self.programs[key] = self._compile({k: n for k, (_, n) in lengths.items()})
        return prog, data, lengths

    def _compile(self, padded: dict[str, int]) -> _Program:
        import jax
        import jax.numpy as jnp
        import pytensor.tensor as pt
        from numpyro.infer.hmc import hmc
        from pymc.sampling.jax import get_jaxified_graph
        from pytensor.graph.replace import graph_replace

        from .initial import initial_point

        jax.config.update("jax_enable_x64", True)
        model = self.model
        shared = list(model.data_vars)
        syms = [v.type() for v in shared]
        value_vars = model.value_vars
        outs = model.replace_rvs_by_values([model[n] for n in self.stored])
        swap = dict(zip(shared, syms, strict=True))
        for dim, n in padded.items():  # shapes along a padded dimension: the padded length
            length = model.dim_lengths[dim]
            swap[length] = pt.constant(n, dtype=length.dtype)
        graphs = graph_replace([model.logp(jacobian=True), *outs], swap, strict=False)
        logp_fn = get_jaxified_graph(inputs=value_vars + syms, outputs=graphs[:1])
        post_fn = get_jaxified_graph(inputs=value_vars + syms, outputs=list(graphs[1:]))
        point = initial_point(model)  # compiled once per model (PyMC's compiles anew)
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

                def record(s):
                    return (s.z, s.diverging, s.num_steps, s.accept_prob, s.energy, s.adapt_state.step_size,
                            -s.potential_energy)

                # warm-up and draws in one loop, so that the transition is traced and compiled once;
                # a warm-up transition writes into row 0, which the first draw overwrites
                def step(i, carry):
                    s, out = carry
                    s = sample_kernel(s, model_args=data)
                    row = jnp.maximum(i - tune, 0)
                    return s, jax.tree_util.tree_map(lambda o, v: o.at[row].set(v), out, record(s))

                shapes = jax.eval_shape(record, state)
                out = jax.tree_util.tree_map(lambda a: jnp.zeros((draws, *a.shape), a.dtype), shapes)
                return jax.lax.fori_loop(0, tune + draws, step, (state, out))[1]

            return jax.lax.map(lambda kx: chain(*kx), (keys, x0))  # chains in turn (docstring)

        @jax.jit
        def post(z, data):
            return jax.vmap(lambda x: post_fn(*split(x), *data))(z)

        @jax.jit
        def logp(x, data):
            return -potential_gen(*data)(x)

        return _Program(run=run, post=post, logp=logp, n_traces=n_traces)

    # -- sampling ------------------------------------------------------------------------------
    def sample(self, start: dict[str, np.ndarray], *, chains: int, draws: int, tune: int, seed: int,
               target_accept: float) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Draws of the stored variables and NUTS statistics, each ``(chains, draws, ...)``.

        ``start`` holds every value variable's unconstrained start (by value-variable name); every
        chain starts there.
        """
        import jax

        prog, data, lengths = self._program()
        x0 = np.concatenate([np.ravel(start[v.name]) for v in self.model.value_vars]).astype(np.float64)
        keys = jax.random.split(jax.random.key(int(seed)), chains)
        z, div, n_steps, acc, energy, step, lp = prog.run(keys, np.tile(x0, (chains, 1)), data, tune=int(tune),
                                                          draws=int(draws), target_accept=float(target_accept))
        flat = prog.post(z.reshape((chains * draws, -1)), data)
        post = {}
        for name, v in zip(self.stored, flat, strict=True):
            v = np.asarray(v).reshape((chains, draws) + np.shape(v)[1:])
            for ax, dim in enumerate(self.model.named_vars_to_dims.get(name, ())):
                if dim in lengths:  # the padded rows cut off
                    v = np.take(v, np.arange(lengths[dim][0]), axis=2 + ax)
            post[name] = v
        n_steps = np.asarray(n_steps)
        stats = {"diverging": np.asarray(div), "n_steps": n_steps, "acceptance_rate": np.asarray(acc),
                 "energy": np.asarray(energy), "step_size": np.asarray(step), "lp": np.asarray(lp),
                 "tree_depth": np.floor(np.log2(np.maximum(n_steps, 1))).astype(int) + 1}
        return post, stats

    def log_density(self, x: np.ndarray) -> float:
        """The program's log density at the unconstrained point ``x`` (value variables flattened
        in ``model.value_vars`` order), on the model's current data (padded as sampled)."""
        prog, data, _ = self._program()
        return float(prog.logp(np.asarray(x, dtype=np.float64), data))

    @property
    def n_traces(self) -> int:
        """How many times a log density was traced by JAX (compiles), over all programs."""
        return sum(p.n_traces[0] for p in self.programs.values())
