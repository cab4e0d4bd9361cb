//! Volcano HyperNodes → the HyperNode of each tier that holds each server: a node is in the
//! HyperNodes that name it (by `exactMatch` or `labelMatch`) and in every HyperNode above
//! those, through the HyperNodes that name them as members. A node in two HyperNodes of one
//! tier, a HyperNode in two parents, a member of a tier not below its parent's and a
//! `regexMatch` (coplan has no regular expressions) are refused where they are written.

use std::collections::{BTreeMap, BTreeSet};

use serde_saphyr::Spanned;

use super::budgets::matches;
use super::fabric_levels::tier_of;
use super::fabric_read::Placed;
use super::read::{NodeObject, Origin, at_object, at_span};
use crate::import::error::ImportError;
use crate::import::fabric_objects::{Member, MemberSelector};
use crate::import::k8s_objects::LabelSelector;
use crate::import::summary::ImportSummary;

/// Per server (by name): the HyperNode holding it at each tier.
pub(super) type TierPlaces = BTreeMap<String, BTreeMap<i64, String>>;

/// Where a member was written, for the errors about it.
#[derive(Clone, Copy)]
enum At<'a> {
    Name(&'a Spanned<String>),
    Labels(&'a Spanned<LabelSelector>),
}

impl At<'_> {
    fn error(self, origin: &Origin, message: String) -> ImportError {
        match self {
            At::Name(s) => at_span(origin, 1, s, message),
            At::Labels(s) => at_span(origin, 1, s, message),
        }
    }
}

/// A node named as a member of a HyperNode.
struct Direct<'a> {
    hypernode: &'a Placed,
    node: String,
    at: At<'a>,
}

/// The HyperNodes' members, read: the nodes each names and each HyperNode's parent.
#[derive(Default)]
struct Members<'a> {
    direct: Vec<Direct<'a>>,
    parent: BTreeMap<&'a str, &'a str>,
    /// The servers' names.
    servers: BTreeSet<&'a str>,
}

/// The HyperNode of each tier that holds each of `servers`.
pub(super) fn hypernode_places<'a>(
    hypernodes: &'a BTreeMap<String, Placed>,
    servers: &[&'a NodeObject],
    summary: &mut ImportSummary,
) -> Result<TierPlaces, ImportError> {
    let mut tiers: BTreeMap<&str, i64> = BTreeMap::new();
    for (name, h) in hypernodes {
        tiers.insert(name, tier_of(h)?);
    }
    let mut members = Members {
        servers: servers.iter().map(|n| n.name.as_str()).collect(),
        ..Members::default()
    };
    for h in hypernodes.values() {
        for (j, member) in h.object.spec.members.iter().enumerate() {
            members.read(h, (j + 1, member), (hypernodes, &tiers), servers, summary)?;
        }
    }
    let mut places = TierPlaces::new();
    for d in &members.direct {
        let place = places.entry(d.node.clone()).or_default();
        let mut current = d.hypernode.name.as_str();
        loop {
            let tier = tiers.get(current).copied().unwrap_or_default();
            match place.get(&tier) {
                Some(other) if other != current => {
                    return Err(d
                        .at
                        .error(
                            &d.hypernode.origin,
                            format!(
                                "node `{}` is in HyperNode `{other}` and in HyperNode `{current}`, both of tier {tier}",
                                d.node
                            ),
                        )
                        .with(
                            "in two HyperNodes of one tier",
                            "each node sits in one HyperNode per tier, the HyperNodes nested as the network is",
                        ));
                }
                _ => {
                    place.insert(tier, current.to_string());
                }
            }
            match members.parent.get(current) {
                Some(up) => current = up,
                None => break,
            }
        }
    }
    Ok(places)
}

impl<'a> Members<'a> {
    /// Reads member `j` of HyperNode `h`.
    fn read(
        &mut self,
        h: &'a Placed,
        (j, member): (usize, &'a Member),
        (hypernodes, tiers): (&'a BTreeMap<String, Placed>, &BTreeMap<&str, i64>),
        servers: &[&NodeObject],
        summary: &mut ImportSummary,
    ) -> Result<(), ImportError> {
        let what = format!("HyperNode `{}`, member {j}", h.name);
        let Some(kind) = &member.kind else {
            return Err(at_object(&h.origin, format!("{what} has no type"))
                .with("no type", "a member is of type Node or HyperNode"));
        };
        let is_node = match kind.value.as_str() {
            "Node" => true,
            "HyperNode" => false,
            other => {
                return Err(at_span(
                    &h.origin,
                    1,
                    kind,
                    format!("{what}: type `{other}` is neither Node nor HyperNode"),
                )
                .with("unknown type", "a member is of type Node or HyperNode"));
            }
        };
        match selector(&h.origin, &what, &member.selector)? {
            At::Name(name) if is_node => {
                if self.servers.contains(name.value.as_str()) {
                    self.direct.push(Direct {
                        hypernode: h,
                        node: name.value.clone(),
                        at: At::Name(name),
                    });
                } else {
                    summary.dropped("hypernode_members_that_are_no_server", 1);
                }
            }
            At::Labels(labels) if is_node => {
                check_operators(&h.origin, &what, labels)?;
                for n in servers {
                    if matches(&labels.value, &n.object.metadata.labels) {
                        self.direct.push(Direct {
                            hypernode: h,
                            node: n.name.clone(),
                            at: At::Labels(labels),
                        });
                    }
                }
            }
            At::Labels(labels) => {
                return Err(at_span(
                    &h.origin,
                    1,
                    labels,
                    format!("{what}: labelMatch selects nodes, not HyperNodes"),
                )
                .with(
                    "not for HyperNodes",
                    "name a member HyperNode with exactMatch",
                ));
            }
            At::Name(name) => self.child(h, &what, name, (hypernodes, tiers))?,
        }
        Ok(())
    }

    /// `h`'s member HyperNode `name`: it exists, sits on a lower tier and in no other parent.
    fn child(
        &mut self,
        h: &'a Placed,
        what: &str,
        name: &'a Spanned<String>,
        (hypernodes, tiers): (&'a BTreeMap<String, Placed>, &BTreeMap<&str, i64>),
    ) -> Result<(), ImportError> {
        let refuse = |message: String, label: &str, help: &str| {
            Err(at_span(&h.origin, 1, name, message).with(label, help))
        };
        let Some((child, _)) = hypernodes.get_key_value(&name.value) else {
            return refuse(
                format!("{what}: HyperNode `{}` is not in the snapshot", name.value),
                "no such HyperNode",
                "export every HyperNode: `kubectl get hypernodes -o yaml`",
            );
        };
        let (up, down) = (
            tiers.get(h.name.as_str()).copied().unwrap_or_default(),
            tiers.get(child.as_str()).copied().unwrap_or_default(),
        );
        if down >= up {
            return refuse(
                format!("{what}: HyperNode `{child}` is of tier {down}, not below {up}"),
                "not a lower tier",
                "a HyperNode's member HyperNodes are of lower tiers",
            );
        }
        if let Some(other) = self.parent.get(child.as_str())
            && *other != h.name
        {
            return refuse(
                format!("{what}: HyperNode `{child}` is a member of HyperNode `{other}` too"),
                "in two parents",
                "each HyperNode sits in one HyperNode of the tier above",
            );
        }
        self.parent.insert(child.as_str(), h.name.as_str());
        Ok(())
    }
}

/// The one way a member is selected; a `regexMatch`, none or several are refused.
fn selector<'a>(origin: &Origin, what: &str, s: &'a MemberSelector) -> Result<At<'a>, ImportError> {
    if let Some(regex) = &s.regex_match {
        return Err(at_span(
            origin,
            1,
            regex,
            format!("{what}: regexMatch is not supported"),
        )
        .with(
            "not supported",
            "coplan reads members selected by exactMatch or labelMatch; list the nodes by name",
        ));
    }
    match (&s.exact_match, &s.label_match) {
        (Some(exact), None) => match &exact.name {
            Some(name) => Ok(At::Name(name)),
            None => Err(at_object(origin, format!("{what}: exactMatch has no name"))
                .with("no name", "exactMatch names one node or HyperNode")),
        },
        (None, Some(labels)) => Ok(At::Labels(labels)),
        (Some(_), Some(_)) => Err(at_object(
            origin,
            format!("{what} sets both exactMatch and labelMatch"),
        )
        .with("two selectors", "a member is selected one way")),
        (None, None) => Err(at_object(origin, format!("{what} selects nothing"))
            .with("no selector", "select a member by exactMatch or labelMatch")),
    }
}

/// A labelMatch's operators are those of a label selector.
fn check_operators(
    origin: &Origin,
    what: &str,
    labels: &Spanned<LabelSelector>,
) -> Result<(), ImportError> {
    for r in &labels.value.match_expressions {
        if !matches!(
            r.operator.as_str(),
            "In" | "NotIn" | "Exists" | "DoesNotExist"
        ) {
            return Err(at_span(
                origin,
                1,
                labels,
                format!(
                    "{what}: labelMatch operator `{}` (expected In, NotIn, Exists or DoesNotExist)",
                    r.operator
                ),
            )
            .with("unknown operator", "a label selector's operators"));
        }
    }
    Ok(())
}
