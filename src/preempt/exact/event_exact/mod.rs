//! The exact per-event optimum by branch and bound (`[planners] event_solver = "exact"`, the
//! default): the same problem, objective and tie-breaks as the per-server MILP
//! ([`super::ilp`]), solved combinatorially.
//!
//! The problem: choose a server, a set of its potential victims and (through the node
//! allocator) a placement, minimising the canonical cost; leaving the pod unplaced costs
//! `unplaced`. For a victim set S on a server, the allocator places the pod at the finest level
//! where some domain holds the request in its free plus freed GPUs and cores, so
//! cost(S) = Σ_{v∈S} w(v) + c(finest admitted level such a domain has). Every weight is ≥ 0
//! (validation), so an optimal set can be shrunk to a *minimal cover* of the domain it is
//! placed in (no victim can leave while the domain still holds the request) without raising
//! its cost, and removing a victim always improves its candidate-chain key. The optimum with
//! the best chain key is therefore a minimal cover of some admitted domain, and the search
//! enumerates exactly those, pruned:
//!
//! 1. Every server gets a lower bound: per admitted domain its placement cost plus the
//!    cheapest k of the victims with GPUs or cores inside it, k the counting bound (the fewest
//!    victims whose GPUs, and apart whose cores, inside the domain could cover the shortfall,
//!    as FlexTopo's filter computes it); and an optimistic chain key (the best key any k of its
//!    victims could have). Servers are searched in that order.
//! 2. A server (or one of its domains) is skipped when its bound exceeds the best cost found,
//!    or when it can only tie that cost and its optimistic chain key is worse than the best
//!    candidate's.
//! 3. Within a domain, a depth-first search includes or excludes each victim with GPUs or
//!    cores inside it (cheapest first), stops a branch as soon as the domain holds the request
//!    (a cover), never adds a victim that frees nothing still missing, and cuts a branch by
//!    the same two bounds computed on what is left.
//!
//! Each cover reached is priced as the allocator would place the pod (its finest fitting
//! domain, which may be finer than the one searched) and ranked by cost, ties within
//! [`COST_EPS`](super::ilp::COST_EPS) by the candidate chain, exactly as the MILP ranks its per-server answers. The
//! decision is replayed with the node allocator, which must reproduce its cost.
//!
//! A server whose search visits more than [`NODE_BUDGET`] nodes is handed to its MILP
//! instead (within `ilp_time_limit_s`), keeping what the search found so far: on the
//! paper preset no server comes near the budget (`cargo bench --bench preemption` counts the
//! fallbacks); it bounds the work on servers with many small victims.

mod bounds;
mod optimum;
mod search;
#[cfg(test)]
mod tests;

pub use self::optimum::{
    NODE_BUDGET, best_tied_on_server, exact_optimum, exact_optimum_with_stats,
};
pub use self::search::SearchStats;
