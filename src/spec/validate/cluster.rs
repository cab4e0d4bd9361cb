//! Single-file checks of a cluster spec, with the server-size limits they enforce: the
//! importers clamp to the same limits, so they live with the check that states them.

use crate::spec::limits::{MAX_CORES_PER_SERVER, MAX_GPUS_PER_SERVER, MAX_PENALTY, MAX_SERVERS};
use std::collections::BTreeMap;

use super::findings::Findings;
use super::ranges::{Field, IntRange::*, int, maybe_int, titled};
use crate::p;
use crate::spec::cluster::{ClusterSpec, PoolSpec, ServerTypeSpec, builtin_server_types};
use crate::spec::source::Finding;

/// The ranges of a `[[server_type]]`'s sizes.
const SERVER_TYPE: &[Field<ServerTypeSpec>] = &[
    int("sockets", |t| t.sockets, AtLeast(1)),
    int("numa_per_socket", |t| t.numa_per_socket, AtLeast(1)),
    int("cores_per_numa", |t| t.cores_per_numa, AtLeast(1)),
    maybe_int("core_group_size", |t| t.core_group_size, AtLeast(1)),
];

/// The range of a `[[pool]]`'s `count`.
const POOL: &[Field<PoolSpec>] = &[titled(
    "pool",
    int("count", |p| p.count, Between(1, MAX_SERVERS)),
)];

/// Single-file checks of a cluster spec.
pub fn cluster(spec: &ClusterSpec) -> Vec<Finding> {
    let mut out = Findings::default();
    let mut type_names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in spec.server_type.iter().enumerate() {
        if let Some(first) = type_names.insert(&t.name, i) {
            out.duplicate(
                p!["server_type", i, "name"],
                "server type",
                &t.name,
                &format!("server_type[{first}]"),
            );
            type_names.insert(&t.name, first);
        }
        out.fields(&p!["server_type", i], t, SERVER_TYPE);
        gpu_numa(&mut out, i, t);
        core_count(&mut out, i, t);
        penalties(&mut out, i, t);
    }
    if spec.pool.is_empty() {
        out.push(
            Finding::new(
                "spec::out-of-range",
                "pool",
                "the cluster has no pools",
                "empty",
            )
            .help("add at least one [[pool]] with a server_type and a count"),
        );
    }
    pools(&mut out, spec, &type_names);
    super::eligibility::named_servers(&mut out, spec);
    super::fabric::fabric(&mut out, spec);
    out.0
}

/// Each GPU on a NUMA node of the type, and no more GPUs than a server holds.
fn gpu_numa(out: &mut Findings, i: usize, t: &ServerTypeSpec) {
    // Saturating: both factors are validated separately and may be huge here.
    let numa_count = t.sockets.max(0).saturating_mul(t.numa_per_socket.max(0));
    if t.sockets > 0 && t.numa_per_socket > 0 {
        for (g, &numa) in t.gpu_numa.iter().enumerate() {
            if numa < 0 || numa >= numa_count {
                out.push(
                    Finding::new(
                        "spec::missing-numa",
                        p!["server_type", i, "gpu_numa", g],
                        format!("GPU {g} is attached to NUMA node {numa}, which does not exist"),
                        "no such NUMA node",
                    )
                    .help(format!(
                        "this server type has {numa_count} NUMA nodes (0…{}): {} sockets × {} per socket",
                        numa_count - 1,
                        t.sockets,
                        t.numa_per_socket
                    )),
                );
            }
        }
    }
    if t.gpu_numa.len() as i64 > MAX_GPUS_PER_SERVER {
        out.push(
            Finding::new(
                "spec::too-large",
                p!["server_type", i, "gpu_numa"],
                format!(
                    "{} GPUs per server; at most {MAX_GPUS_PER_SERVER} are supported",
                    t.gpu_numa.len()
                ),
                "too many GPUs",
            )
            .help("split the server into several server types"),
        );
    }
}

/// No more cores than a server holds ([`MAX_CORES_PER_SERVER`]).
fn core_count(out: &mut Findings, i: usize, t: &ServerTypeSpec) {
    let numa_count = t.sockets.max(0).saturating_mul(t.numa_per_socket.max(0));
    let cores = numa_count.saturating_mul(t.cores_per_numa.max(0));
    if cores <= MAX_CORES_PER_SERVER {
        return;
    }
    // Pointed at the largest of the three factors: `sockets = 100` is the typo, not the
    // `cores_per_numa = 4` beside it.
    let factors = [
        ("cores_per_numa", t.cores_per_numa, "too many cores"),
        ("numa_per_socket", t.numa_per_socket, "too many NUMA nodes"),
        ("sockets", t.sockets, "too many sockets"),
    ];
    let (key, _, label) = factors
        .iter()
        .copied()
        .fold(factors[0], |best, f| if f.1 > best.1 { f } else { best });
    out.push(
        Finding::new(
            "spec::too-large",
            p!["server_type", i, key],
            format!(
                "{cores} cores per server ({} sockets × {} NUMA nodes × {} cores); at most {MAX_CORES_PER_SERVER} are supported",
                t.sockets, t.numa_per_socket, t.cores_per_numa
            ),
            label,
        )
        .help("model SMT siblings as one core, or use fewer cores per NUMA node"),
    );
}

/// Each penalty in [1, `MAX_PENALTY`], and monotone across the levels.
fn penalties(out: &mut Findings, i: usize, t: &ServerTypeSpec) {
    let pen = t.penalty;
    for (key, v) in [
        ("numa", pen.numa),
        ("socket", pen.socket),
        ("cross_socket", pen.cross_socket),
    ] {
        if !(v.is_finite() && v >= 1.0) {
            out.push(
                Finding::new(
                    "spec::bad-penalty",
                    p!["server_type", i, "penalty", key],
                    format!("penalty `{key}` is {v}, below 1.0"),
                    "below 1.0",
                )
                .help("penalties are slowdowns relative to a single-NUMA placement: each ≥ 1.0"),
            );
        } else if v > MAX_PENALTY {
            out.push(
                Finding::new(
                    "spec::too-large",
                    p!["server_type", i, "penalty", key],
                    format!("penalty `{key}` is {v:e}; at most {MAX_PENALTY:e} is supported"),
                    "too large",
                )
                .help(
                    "penalties are slowdowns (measured ones lie between 1 and 3.2); docs/spec.md, \"Limits\"",
                ),
            );
        }
    }
    if pen.numa > pen.socket || pen.socket > pen.cross_socket {
        let key = if pen.numa > pen.socket {
            "socket"
        } else {
            "cross_socket"
        };
        out.push(
            Finding::new(
                "spec::bad-penalty",
                p!["server_type", i, "penalty", key],
                format!(
                    "penalties are not monotone: numa {}, socket {}, cross_socket {}",
                    pen.numa, pen.socket, pen.cross_socket
                ),
                "smaller than the level below it",
            )
            .help("a wider placement cannot be faster: require numa ≤ socket ≤ cross_socket"),
        );
    }
}

/// The pools: each of a known type and a count in range, within `MAX_SERVERS` together, and
/// naming its servers apart from every other pool's.
fn pools(out: &mut Findings, spec: &ClusterSpec, type_names: &BTreeMap<&str, usize>) {
    let builtins: Vec<String> = builtin_server_types().into_iter().map(|t| t.name).collect();
    let mut server_names: BTreeMap<String, usize> = BTreeMap::new();
    let mut total_servers: i64 = 0;
    for (i, pool) in spec.pool.iter().enumerate() {
        if spec.server_type(&pool.server_type).is_none() {
            let mut known: Vec<&str> = type_names.keys().copied().collect();
            known.extend(builtins.iter().map(String::as_str));
            out.push(
                Finding::new(
                    "spec::undefined-reference",
                    p!["pool", i, "server_type"],
                    format!("pool names undefined server type `{}`", pool.server_type),
                    "not defined",
                )
                .help(format!("known server types: {}", known.join(", "))),
            );
        }
        out.fields(&p!["pool", i], pool, POOL);
        total_servers = total_servers.saturating_add(pool.count.max(0));
        if total_servers > MAX_SERVERS {
            // Naming the servers of a pool above the limit would allocate them all.
            if pool.count <= MAX_SERVERS {
                out.at_most(
                    p!["pool", i, "count"],
                    total_servers,
                    MAX_SERVERS,
                    "the cluster's server count (all pools up to this one)",
                );
            }
            continue;
        }
        server_names_of(out, i, pool, &mut server_names);
    }
}

/// A pool's `names` match its count, and none is a name an earlier pool produced.
fn server_names_of(
    out: &mut Findings,
    i: usize,
    pool: &PoolSpec,
    server_names: &mut BTreeMap<String, usize>,
) {
    if let Some(names) = &pool.names
        && names.len() as i64 != pool.count
    {
        out.push(
            Finding::new(
                "spec::out-of-range",
                p!["pool", i, "names"],
                format!(
                    "pool {i} lists {} server names but has count = {}",
                    names.len(),
                    pool.count
                ),
                "one name per server",
            )
            .help("give exactly `count` names, or drop `names` to number the servers"),
        );
    }
    for name in ClusterSpec::pool_server_names(pool) {
        if let Some(first) = server_names.get(&name) {
            out.push(
                Finding::new(
                    "spec::duplicate-name",
                    if pool.names.is_some() {
                        p!["pool", i, "names"]
                    } else {
                        p!["pool", i, "name_prefix"]
                    },
                    format!(
                        "pool {i} produces server name `{name}`, already produced by pool {first}"
                    ),
                    "names collide",
                )
                .help(if pool.names.is_some() {
                    "server names must be unique across the cluster"
                } else {
                    "give each pool its own name_prefix"
                }),
            );
            break;
        }
        server_names.insert(name, i);
    }
}
