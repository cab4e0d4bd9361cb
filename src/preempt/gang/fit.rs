//! How many identical pods fit on one server, and where: the counting rule every gang
//! planner shares. The domains of one level partition the server and nest (NUMA ⊂ socket ⊂
//! server), so counting per domain is exact: with `caps[l]` pods placeable when every pod
//! lies within a domain of level `l` or better, `caps[numa]` of `j` pods can sit on one NUMA
//! node, `caps[socket] − caps[numa]` more within a socket, the rest across sockets.

use crate::topology::{CoreSet, GpuSet, Level, Request, ServerType, pick_cores};

/// A pod that asks for nothing fits any number of times; counts stop here.
const UNBOUNDED: u32 = u16::MAX as u32;

/// Pods of `req` that fit in one domain with these free GPUs and cores.
fn in_domain(req: Request, gpus: u32, cores: u32) -> u32 {
    let by = |free: u32, need: u32| free.checked_div(need).unwrap_or(UNBOUNDED);
    by(gpus, req.gpus).min(by(cores, req.cores))
}

/// Per level (NUMA, socket, cross-socket): how many pods of `req` fit on a server of type `t`
/// with free `gpus` and `cores`, each within one domain of that level or better.
pub fn caps(t: &ServerType, req: Request, gpus: GpuSet, cores: CoreSet) -> [u32; 3] {
    Level::ALL.map(|level| {
        t.domains_for(req, level)
            .iter()
            .map(|d| in_domain(req, gpus.and(d.gpus).len(), cores.and(d.cores).len()))
            .fold(0u32, |a, b| a.saturating_add(b))
            .min(UNBOUNDED)
    })
}

/// How many of `j` pods land at each level when the best levels are filled first (`caps` of
/// the free resources); `None` when `j` pods do not fit within `worst`.
pub fn split(caps: [u32; 3], j: u32, worst: Level) -> Option<[u32; 3]> {
    let worst_index = Level::ALL.iter().position(|&l| l == worst)?;
    if j > caps[worst_index] {
        return None;
    }
    let mut out = [0u32; 3];
    let mut placed = 0;
    for (i, cap) in caps.iter().enumerate().take(worst_index + 1) {
        let up_to_here = (*cap).min(j).max(placed);
        out[i] = up_to_here - placed;
        placed = up_to_here;
    }
    Some(out)
}

/// The most pods that fit within `worst`.
pub fn most(caps: [u32; 3], worst: Level) -> u32 {
    Level::ALL
        .iter()
        .position(|&l| l == worst)
        .map_or(0, |i| caps[i])
}

/// Ids for `j` pods of `req` on free `gpus` and `cores`, the best levels first (as [`split`]
/// counts them): each pod's GPUs, cores and level. `None` when they do not fit within `worst`.
pub fn assign(
    t: &ServerType,
    req: Request,
    mut gpus: GpuSet,
    mut cores: CoreSet,
    j: u32,
    worst: Level,
) -> Option<Vec<(GpuSet, CoreSet, Level)>> {
    let counts = split(caps(t, req, gpus, cores), j, worst)?;
    let mut out = Vec::with_capacity(j as usize);
    for (level, want) in Level::ALL.into_iter().zip(counts) {
        let mut left = want;
        for d in t.domains_for(req, level) {
            while left > 0 {
                let free_g = gpus.and(d.gpus);
                let free_c = cores.and(d.cores);
                if in_domain(req, free_g.len(), free_c.len()) == 0 {
                    break;
                }
                let g = free_g.lowest(req.gpus)?;
                let c = pick_cores(t, g, free_c, req.cores)?;
                gpus = gpus.minus(g);
                cores = cores.minus(c);
                out.push((g, c, t.level_of(g, c)));
                left -= 1;
            }
        }
        if left > 0 {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::cluster::builtin_server_types;

    fn gpu_2s4n8g() -> ServerType {
        let spec = builtin_server_types()
            .into_iter()
            .find(|t| t.name == "gpu-2s4n8g")
            .expect("built-in type");
        ServerType::new(&spec)
    }

    #[test]
    fn counts_per_level_nest_and_ids_follow_them() {
        let t = gpu_2s4n8g();
        let req = Request::plain(2, 4);
        let all = (GpuSet::range(0, 8), CoreSet::range(0, 96));
        assert_eq!(caps(&t, req, all.0, all.1), [4, 4, 4]);
        // GPUs 1, 2 and 5, 6 free: no NUMA node holds two, each socket does once.
        let scattered = GpuSet::from_ids([1, 2, 5, 6]);
        assert_eq!(caps(&t, req, scattered, all.1), [0, 2, 2]);
        assert_eq!(split([0, 2, 2], 2, Level::Socket), Some([0, 2, 0]));
        assert_eq!(split([0, 2, 2], 2, Level::Numa), None);
        let placed = assign(&t, req, scattered, all.1, 2, Level::Socket).expect("fits");
        assert_eq!(placed.len(), 2);
        assert!(placed.iter().all(|(_, _, l)| *l == Level::Socket));
        assert_eq!(placed[0].0.or(placed[1].0), scattered);
    }
}
