"""Personalized PageRank on the passage graph: a random walk with restart, solved once per question and seeds.

The walk's mass ``m`` is the fixed point of ``m = restart · s + (1 − restart) · P m`` (``s`` the seeds,
``P`` the column-stochastic matrix of the symmetric weighted adjacency ``A``), normalised to sum 1
(mass that reaches a node without edges goes back to the seeds). Two ways to get it, same fixed point:

- :class:`PowerIteration` multiplies by ``P`` until the mass moves by less than ``1e-6`` (L1): one pass
  over every edge per step, about 15–20 steps. Cheap while the graph has few edges.
- :class:`EntitySolve` solves the walk exactly in entity space. No edge joins two chunks, so a chunk's
  mass is its seed weight plus what its entities pass it, and eliminating the chunks leaves a system over
  the entities alone, ``(D_e − S) y = b`` with ``S = q A_ee + q² A_ec D_c⁻¹ A_ce`` (``q = 1 − restart``,
  ``D`` the weighted degrees): symmetric and diagonally dominant, so its inverse (Cholesky, LAPACK) is
  computed once per graph version and restart. A question then costs a product with the inverse's rows of
  its seeds' entities and one pass over the mention edges. Chosen when the entities are few enough to
  invert (:data:`DENSE_ENTITIES`) and the edges many (:data:`DENSE_EDGES`), where 20 passes over every edge
  cost more: 20,000 chunks of the scale corpus (2,000 entities, 2.3 million stored edges) take ~60 ms a
  walk by power iteration and ~2 ms here, after a 0.5–1 s inversion (bench/ppr.py).

    walk = walk_for(adjacency, chunks, entities, restart=0.5)
    mass = walk.mass(start)  # start: the seed weights, summing to 1
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from scipy import sparse
from scipy.linalg import lapack

__all__ = ["Walk", "PowerIteration", "EntitySolve", "walk_for", "DENSE_ENTITIES", "DENSE_EDGES"]

DENSE_ENTITIES = 3000
"""At most this many entities for :class:`EntitySolve` (its inverse holds ``n²`` floats: 72 MB at 3,000)."""
DENSE_EDGES = 200_000
"""At least this many stored edges (both directions) for :class:`EntitySolve`; fewer, and power iteration is cheap."""
ITERATIONS = 30
TOLERANCE = 1e-6


class Walk(Protocol):
    """The walk's mass for a start vector (one entry per row of the graph, summing to 1)."""

    def mass(self, start: np.ndarray) -> np.ndarray: ...


def _degrees(adjacency: sparse.csr_matrix) -> np.ndarray:
    return np.asarray(adjacency.sum(axis=0)).ravel()


class PowerIteration:
    """The walk by repeated products with the transition matrix (see the module docstring)."""

    def __init__(self, adjacency: sparse.csr_matrix, restart: float) -> None:
        degree = _degrees(adjacency)
        scale = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
        self.matrix = (adjacency @ sparse.diags(scale)).tocsr()
        self.restart = restart

    def mass(self, start: np.ndarray) -> np.ndarray:
        restart = self.restart
        mass = start.copy()
        for _ in range(ITERATIONS):
            step = restart * start + (1.0 - restart) * (self.matrix @ mass)
            lost = 1.0 - step.sum()  # mass on nodes without edges stays in the walk through the restart
            step += lost * start
            done = np.abs(step - mass).sum() < TOLERANCE
            mass = step
            if done:
                break
        return mass


class EntitySolve:
    """The walk's exact fixed point through the inverse of the entity system (see the module docstring)."""

    def __init__(self, adjacency: sparse.csr_matrix, chunks: np.ndarray, entities: np.ndarray, restart: float) -> None:
        q = 1.0 - restart
        degree = _degrees(adjacency)
        self.size = adjacency.shape[0]
        self.chunks, self.entities = chunks, entities
        self.q = q
        self.a_ce = adjacency[chunks][:, entities].tocsr()  # mention edges: chunk rows, entity columns
        d_c = degree[chunks]
        self.d_e = degree[entities]
        inv_c = np.divide(1.0, d_c, out=np.zeros_like(d_c), where=d_c > 0)
        self.passed = (sparse.diags(inv_c) @ self.a_ce).tocsr()  # row c: what a unit of mass on chunk c gives
        system = q * (self.a_ce.T @ self.passed)
        system = (system + adjacency[entities][:, entities]) * q
        k = np.diag(self.d_e) - system.toarray()
        factor, info = lapack.dpotrf(k, lower=0, overwrite_a=1)
        if info == 0:
            inverse, info = lapack.dpotri(factor, lower=0, overwrite_c=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"the entity system is not positive definite (LAPACK info {info})")
        upper = np.triu(inverse)
        self.inverse = upper + np.triu(upper, 1).T

    def mass(self, start: np.ndarray) -> np.ndarray:
        s_c, s_e = start[self.chunks], start[self.entities]
        b = s_e.copy()
        seeded = np.flatnonzero(s_c)
        if len(seeded):
            b += self.q * (self.passed[seeded].T @ s_c[seeded])
        given = np.flatnonzero(b)
        y = b[given] @ self.inverse[given]  # the inverse is symmetric: its rows are its columns
        x_e = self.d_e * y
        x_c = s_c + self.q * (self.a_ce @ y)
        out = np.zeros(self.size)
        out[self.chunks] = x_c
        out[self.entities] = x_e
        total = out.sum()
        return out / total if total > 0 else out


def walk_for(adjacency: sparse.csr_matrix, chunks: np.ndarray, entities: np.ndarray, *, restart: float) -> Walk:
    """The cheaper walk for this graph (``chunks``, ``entities``: their rows; no edge may join two chunks)."""
    if len(entities) <= DENSE_ENTITIES and adjacency.nnz >= DENSE_EDGES and _bipartite_chunks(adjacency, chunks):
        return EntitySolve(adjacency, chunks, entities, restart)
    return PowerIteration(adjacency, restart)


def _bipartite_chunks(adjacency: sparse.csr_matrix, chunks: np.ndarray) -> bool:
    """Whether no edge joins two chunks (a chunk IRI that is also a fact's subject or object would)."""
    return adjacency[chunks][:, chunks].nnz == 0
