//! Checks of the scheduling rules (DESIGN §12.1) that both spec kinds carry: node selector
//! requirements as the API server validates them, tolerations, and the named servers a
//! cluster gives rules to.

use std::collections::BTreeMap;

use super::findings::Findings;
use crate::p;
use crate::spec::cluster::ClusterSpec;
use crate::spec::eligibility::{
    AffinityTerm, NODE_NAME_FIELD, Requirement, SelectorOperator, Toleration, TolerationOperator,
};
use crate::spec::source::Finding;

fn invalid(path: String, message: String, label: &str, help: &str) -> Finding {
    Finding::new("spec::invalid-rule", path, message, label).help(help.to_string())
}

/// One requirement of a term (`fields`: a `match_fields` one).
fn requirement(out: &mut Findings, path: String, r: &Requirement, fields: bool) {
    use SelectorOperator::*;
    if r.key.is_empty() {
        out.push(invalid(
            p![path.as_str(), "key"],
            "a requirement needs a key".into(),
            "empty key",
            "name a node label, e.g. `nvidia.com/gpu.product`",
        ));
    }
    if fields {
        if r.key != NODE_NAME_FIELD {
            out.push(invalid(
                p![path.as_str(), "key"],
                format!(
                    "`match_fields` supports only `{NODE_NAME_FIELD}`, got `{}`",
                    r.key
                ),
                "unsupported field",
                "match node labels with `match_expressions` instead",
            ));
        }
        if !matches!(r.operator, In | NotIn) {
            out.push(invalid(
                p![path.as_str(), "operator"],
                format!(
                    "`match_fields` supports `In` and `NotIn`, got `{}`",
                    r.operator.as_str()
                ),
                "unsupported operator",
                "use In or NotIn with node names",
            ));
        }
    }
    match r.operator {
        In | NotIn if r.values.is_empty() => out.push(invalid(
            p![path.as_str(), "values"],
            format!("`{}` needs at least one value", r.operator.as_str()),
            "no values",
            "list the values, e.g. values = [\"H100\"]",
        )),
        Exists | DoesNotExist if !r.values.is_empty() => out.push(invalid(
            p![path.as_str(), "values"],
            format!("`{}` takes no values", r.operator.as_str()),
            "values not allowed",
            "drop `values`",
        )),
        Gt | Lt if r.values.len() != 1 || r.values[0].trim().parse::<i64>().is_err() => {
            out.push(invalid(
                p![path.as_str(), "values"],
                format!(
                    "`{}` needs exactly one integer value, got {:?}",
                    r.operator.as_str(),
                    r.values
                ),
                "one integer",
                "e.g. values = [\"4\"]",
            ))
        }
        _ => {}
    }
}

/// A class's required node affinity terms and tolerations, at `path` (the class).
pub fn pod_rules(
    out: &mut Findings,
    path: &str,
    affinity: &[AffinityTerm],
    tolerations: &[Toleration],
) {
    for (t, term) in affinity.iter().enumerate() {
        if term.match_expressions.is_empty() && term.match_fields.is_empty() {
            out.push(invalid(
                p![path, "node_affinity", t],
                "an empty node affinity term matches no node".into(),
                "empty term",
                "give the term `match_expressions` or `match_fields`, or drop it",
            ));
        }
        for (k, r) in term.match_expressions.iter().enumerate() {
            let at = p![path, "node_affinity", t, "match_expressions", k];
            requirement(out, at, r, false);
        }
        for (k, r) in term.match_fields.iter().enumerate() {
            let at = p![path, "node_affinity", t, "match_fields", k];
            requirement(out, at, r, true);
        }
    }
    for (k, t) in tolerations.iter().enumerate() {
        if t.operator == TolerationOperator::Exists && !t.value.is_empty() {
            out.push(invalid(
                p![path, "tolerations", k, "value"],
                "an `Exists` toleration takes no value".into(),
                "value not allowed",
                "drop `value`, or use operator = \"Equal\"",
            ));
        }
        if t.key.is_empty() && t.operator != TolerationOperator::Exists {
            out.push(invalid(
                p![path, "tolerations", k, "key"],
                "a toleration without a key must use operator = \"Exists\"".into(),
                "key required",
                "name the taint key, or set operator = \"Exists\" to tolerate every taint",
            ));
        }
    }
}

/// The `[[server]]` entries of a cluster: each names a server of some pool, once.
pub fn named_servers(out: &mut Findings, spec: &ClusterSpec) {
    let known: std::collections::BTreeSet<String> = spec
        .pool
        .iter()
        .filter(|p| p.count <= crate::spec::limits::MAX_SERVERS)
        .flat_map(ClusterSpec::pool_server_names)
        .collect();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, s) in spec.server.iter().enumerate() {
        if let Some(first) = seen.insert(&s.name, i) {
            out.duplicate(
                p!["server", i, "name"],
                "server",
                &s.name,
                &format!("server[{first}]"),
            );
        }
        if !known.contains(&s.name) {
            out.push(
                Finding::new(
                    "spec::undefined-reference",
                    p!["server", i, "name"],
                    format!("no pool has a server named `{}`", s.name),
                    "unknown server",
                )
                .help("name a server its pool produces (`names`, or `name_prefix` + index)"),
            );
        }
    }
}
