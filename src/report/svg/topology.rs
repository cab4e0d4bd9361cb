//! `coplan topology --format svg`: a map of servers. Each server is a box with its sockets top
//! to bottom, each socket its NUMA nodes left to right, each NUMA node its GPUs (the larger
//! squares) above its cores; a square is coloured by the pod holding it, light grey when
//! free. Without a server named, every server is drawn in a grid, smaller past
//! `MEDIUM_MAX_SERVERS` (the first `MAX_SERVERS` of a bigger cluster, as the subtitle says);
//! with one, that server is drawn large with its socket, NUMA node, GPU and core ids. A
//! cluster with levels above the server and no workload is drawn as a rack map instead
//! ([`rack_map`](super::rack_map)).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::error::SvgError;
use super::style::{
    Area, FREE, INK, LegendEntry, MARGIN, MUTED, Mark, OUTLINE, POD_PALETTE, fit, header, ink_on,
    legend, legend_height, no_data, render, text,
};
use crate::topology::state::ClusterState;
use crate::topology::{Cluster, ServerId, ServerType};

const MAX_SERVERS: usize = 64;
const MAX_LEGEND_PODS: usize = 24;
const HEADER_HEIGHT: u32 = 62;
const MIN_WIDTH: i32 = 1000;
const GRID_WIDTH: i32 = 1200;
/// Cores per row inside a NUMA node: wide NUMA nodes wrap.
const CORES_PER_ROW: usize = 8;
const SOCKET_FILL: RGBColor = RGBColor(0xF7, 0xF7, 0xF7);

/// Sizes of one drawing scale, in pixels.
struct Scale {
    core: i32,
    gpu: i32,
    gap: i32,
    pad: i32,
    /// Ids on squares and names on boxes.
    labelled: bool,
    /// Height of a box's label line (0 unlabelled).
    label: i32,
    /// Height of the server's name line.
    heading: i32,
    name_size: f64,
}

const SMALL: Scale = Scale {
    core: 5,
    gpu: 12,
    gap: 1,
    pad: 3,
    labelled: false,
    label: 0,
    heading: 15,
    name_size: 11.0,
};

const MEDIUM: Scale = Scale {
    core: 11,
    gpu: 24,
    gap: 2,
    pad: 4,
    labelled: false,
    label: 0,
    heading: 18,
    name_size: 13.0,
};

/// Up to this many servers are drawn at the medium scale, more at the small one.
const MEDIUM_MAX_SERVERS: usize = 16;

const LARGE: Scale = Scale {
    core: 26,
    gpu: 52,
    gap: 3,
    pad: 8,
    labelled: true,
    label: 18,
    heading: 30,
    name_size: 18.0,
};

/// The boxes of a server type at a scale.
struct Layout {
    cores_per_row: usize,
    gpus_per_numa: usize,
    numa: (i32, i32),
    socket: (i32, i32),
    server: (i32, i32),
}

fn layout(t: &ServerType, s: &Scale) -> Layout {
    let cores_per_row = t.cores_per_numa.clamp(1, CORES_PER_ROW);
    let core_rows = t.cores_per_numa.div_ceil(cores_per_row) as i32;
    let gpus_per_numa = (0..t.numa_count())
        .map(|n| t.gpu_numa.iter().filter(|g| **g == n).count())
        .max()
        .unwrap_or(0);
    let span = |count: usize, size: i32| (count as i32 * (size + s.gap) - s.gap).max(0);
    let inner_w = span(cores_per_row, s.core)
        .max(span(gpus_per_numa, s.gpu))
        .max(if s.labelled { 70 } else { 0 });
    let gpu_row = if gpus_per_numa > 0 {
        s.gpu + s.gap * 2
    } else {
        0
    };
    let numa = (
        inner_w + 2 * s.pad,
        2 * s.pad + s.label + gpu_row + span(core_rows as usize, s.core),
    );
    let per_socket = t.numa_per_socket.max(1) as i32;
    let socket = (
        2 * s.pad + per_socket * numa.0 + (per_socket - 1) * s.pad,
        2 * s.pad + s.label + numa.1,
    );
    let sockets = t.sockets.max(1) as i32;
    let server = (
        2 * s.pad + socket.0,
        s.heading + s.pad + sockets * socket.1 + (sockets - 1) * s.pad + s.pad,
    );
    Layout {
        cores_per_row,
        gpus_per_numa,
        numa,
        socket,
        server,
    }
}

/// Which pod holds each GPU and core of a server, by the pod's rank in the state (its place
/// among the running pods in id order), which picks its colour: a pod has the same colour in
/// the map of the cluster and in that of its server.
struct Holders {
    gpus: Vec<Option<usize>>,
    cores: Vec<Option<usize>>,
}

/// The pods on the drawn servers, in id order, with their ranks and where they sit.
struct Pods {
    names: Vec<(usize, String)>,
    holders: Vec<Holders>,
}

impl Pods {
    fn of(cluster: &Cluster, state: Option<&ClusterState>, servers: &[ServerId]) -> Self {
        let mut holders: Vec<Holders> = servers
            .iter()
            .map(|id| {
                let t = cluster.type_of(*id);
                Holders {
                    gpus: vec![None; t.gpu_count()],
                    cores: vec![None; t.core_count()],
                }
            })
            .collect();
        let mut names = Vec::new();
        for (rank, (_, pod)) in state.into_iter().flat_map(|s| s.pods()).enumerate() {
            let Some(at) = servers.iter().position(|id| *id == pod.server) else {
                continue;
            };
            names.push((rank, pod.name.clone()));
            let h = &mut holders[at];
            for g in pod.gpus.iter() {
                if let Some(slot) = h.gpus.get_mut(g) {
                    *slot = Some(rank);
                }
            }
            for c in pod.cores.iter() {
                if let Some(slot) = h.cores.get_mut(c) {
                    *slot = Some(rank);
                }
            }
        }
        Pods { names, holders }
    }

    fn colour(holder: Option<usize>) -> RGBColor {
        holder.map_or(FREE, |i| POD_PALETTE[i % POD_PALETTE.len()])
    }

    fn legend(&self) -> Vec<LegendEntry> {
        let pods = self
            .names
            .iter()
            .take(MAX_LEGEND_PODS)
            .map(|(rank, name)| LegendEntry {
                label: name.clone(),
                colour: Pods::colour(Some(*rank)),
                mark: Mark::Swatch,
            });
        pods.chain(std::iter::once(LegendEntry {
            label: "free".into(),
            colour: FREE,
            mark: Mark::Swatch,
        }))
        .collect()
    }

    /// What the legend leaves out, for the subtitle.
    fn overflow(&self) -> String {
        match self.names.len() {
            0 => "no pods placed".into(),
            n if n > MAX_LEGEND_PODS => format!(
                "{n} pods (the legend names the first {MAX_LEGEND_PODS}, … and {} more)",
                n - MAX_LEGEND_PODS
            ),
            1 => "1 pod".into(),
            n => format!("{n} pods"),
        }
    }
}

/// A map of the cluster (every server small; a rack map of a cluster with levels above the
/// server, without `state`) or, with `server`, of that server (large, with ids); `state`
/// colours what its pods hold. An unknown server name is an error naming a few
/// of the cluster's servers.
pub fn topology(
    cluster: &Cluster,
    state: Option<&ClusterState>,
    server: Option<&str>,
) -> Result<String, SvgError> {
    match server {
        Some(name) => match cluster.server_id(name) {
            Some(id) => single(cluster, state, id),
            None => Err(unknown_server(cluster, name)),
        },
        None if state.is_none() && cluster.fabric.has_named_levels() => {
            super::rack_map::rack_map(cluster)
        }
        None => grid(cluster, state),
    }
}

fn unknown_server(cluster: &Cluster, name: &str) -> SvgError {
    let shared = |other: &str| {
        name.chars()
            .zip(other.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    let mut ranked: Vec<(usize, usize, &str)> = cluster
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| (usize::MAX - shared(&s.name), i, s.name.as_str()))
        .collect();
    ranked.sort();
    SvgError::UnknownServer {
        name: name.to_string(),
        cluster: cluster.name.clone(),
        suggestions: ranked.iter().take(5).map(|r| r.2.to_string()).collect(),
        total: cluster.servers.len(),
    }
}

fn grid(cluster: &Cluster, state: Option<&ClusterState>) -> Result<String, SvgError> {
    let title = format!(
        "cluster {}: {} servers, {} GPUs, {} cores",
        cluster.name,
        cluster.servers.len(),
        cluster.gpu_count(),
        cluster.core_count()
    );
    if cluster.servers.is_empty() {
        return no_data(&title);
    }
    let shown: Vec<ServerId> = (0..cluster.servers.len().min(MAX_SERVERS))
        .map(|i| ServerId(i as u32))
        .collect();
    let pods = Pods::of(cluster, state, &shown);
    let scale = if shown.len() <= MEDIUM_MAX_SERVERS {
        &MEDIUM
    } else {
        &SMALL
    };
    let cell = shown.iter().fold((0, 0), |(w, h), id| {
        let l = layout(cluster.type_of(*id), scale);
        (w.max(l.server.0), h.max(l.server.1))
    });
    let (cell_w, cell_h) = (cell.0 + 10, cell.1 + 10);
    let columns = ((GRID_WIDTH - 2 * MARGIN) / cell_w).clamp(1, shown.len() as i32);
    let rows = shown.len().div_ceil(columns as usize) as i32;
    let width = (columns * cell_w + 2 * MARGIN).max(MIN_WIDTH) as u32;
    let entries = pods.legend();
    let mut subtitle = format!(
        "{}; squares: GPUs (large) and cores, coloured by the pod holding them",
        pods.overflow()
    );
    if shown.len() < cluster.servers.len() {
        subtitle = format!(
            "first {} of {} servers; {subtitle}",
            shown.len(),
            cluster.servers.len()
        );
    }
    let height = HEADER_HEIGHT + legend_height(&entries, width) + (rows * cell_h) as u32 + 16;
    render((width, height), |root| {
        let body = header(root, &title, Some(&subtitle))?;
        let body = legend(&body, &entries)?;
        for (k, id) in shown.iter().enumerate() {
            let k = k as i32;
            let origin = (MARGIN + (k % columns) * cell_w, 6 + (k / columns) * cell_h);
            draw_server(
                &body,
                cluster,
                *id,
                &pods.holders[k as usize],
                origin,
                scale,
            )?;
        }
        Ok(())
    })
}

fn single(
    cluster: &Cluster,
    state: Option<&ClusterState>,
    id: ServerId,
) -> Result<String, SvgError> {
    let s = cluster.server(id);
    let t = cluster.type_of(id);
    let title = format!("server {} ({}) of cluster {}", s.name, t.name, cluster.name);
    let pods = Pods::of(cluster, state, &[id]);
    let l = layout(t, &LARGE);
    let width = (l.server.0 + 2 * MARGIN).max(MIN_WIDTH) as u32;
    let entries = pods.legend();
    let subtitle = format!(
        "{} sockets × {} NUMA nodes × {} cores, {} GPUs; {}; squares coloured by the pod \
         holding them",
        t.sockets,
        t.numa_per_socket,
        t.cores_per_numa,
        t.gpu_count(),
        pods.overflow()
    );
    let height = HEADER_HEIGHT + legend_height(&entries, width) + l.server.1 as u32 + 24;
    render((width, height), |root| {
        let body = header(root, &title, Some(&subtitle))?;
        let body = legend(&body, &entries)?;
        draw_server(&body, cluster, id, &pods.holders[0], (MARGIN, 8), &LARGE)
    })
}

/// A box: its outline, over a fill unless white (the page already is).
fn framed(
    area: &Area,
    (x, y): (i32, i32),
    (w, h): (i32, i32),
    fill: RGBColor,
) -> Result<(), SvgError> {
    if fill != WHITE {
        area.draw(&Rectangle::new([(x, y), (x + w, y + h)], fill.filled()))?;
    }
    area.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        OUTLINE.stroke_width(1),
    ))?;
    Ok(())
}

/// A GPU or core square, with its id on a large scale.
fn square(
    area: &Area,
    (x, y): (i32, i32),
    size: i32,
    colour: RGBColor,
    label: Option<String>,
) -> Result<(), SvgError> {
    area.draw(&Rectangle::new(
        [(x, y), (x + size, y + size)],
        colour.filled(),
    ))?;
    if let Some(label) = label {
        area.draw(&Rectangle::new(
            [(x, y), (x + size, y + size)],
            OUTLINE.stroke_width(1),
        ))?;
        let font = if size > 40 { 13.0 } else { 11.0 };
        area.draw_text(
            &label,
            &text(font, ink_on(colour), HPos::Center, VPos::Center),
            (x + size / 2, y + size / 2),
        )?;
    }
    Ok(())
}

fn draw_server(
    area: &Area,
    cluster: &Cluster,
    id: ServerId,
    holders: &Holders,
    (x, y): (i32, i32),
    s: &Scale,
) -> Result<(), SvgError> {
    let t = cluster.type_of(id);
    let l = layout(t, s);
    framed(area, (x, y), l.server, WHITE)?;
    let name = if s.labelled {
        format!("{} ({})", cluster.server(id).name, t.name)
    } else {
        cluster.server(id).name.clone()
    };
    area.draw_text(
        &fit(&name, s.name_size, l.server.0 - 2 * s.pad),
        &text(s.name_size, INK, HPos::Left, VPos::Center),
        (x + s.pad + 1, y + s.heading / 2 + 1),
    )?;
    let box_label = text(12.0, MUTED, HPos::Left, VPos::Top);
    for socket in 0..t.sockets {
        let sx = x + s.pad;
        let sy = y + s.heading + socket as i32 * (l.socket.1 + s.pad);
        framed(area, (sx, sy), l.socket, SOCKET_FILL)?;
        if s.labelled {
            area.draw_text(
                &format!("socket {socket}"),
                &box_label,
                (sx + s.pad, sy + 4),
            )?;
        }
        for k in 0..t.numa_per_socket {
            let numa = socket * t.numa_per_socket + k;
            let nx = sx + s.pad + k as i32 * (l.numa.0 + s.pad);
            let ny = sy + s.pad + s.label;
            framed(area, (nx, ny), l.numa, WHITE)?;
            if s.labelled {
                area.draw_text(&format!("NUMA {numa}"), &box_label, (nx + s.pad, ny + 4))?;
            }
            let inner = (nx + s.pad, ny + s.pad + s.label);
            let gpus = t.gpu_numa.iter().enumerate().filter(|(_, n)| **n == numa);
            for (slot, (gpu, _)) in gpus.enumerate() {
                let at = (inner.0 + slot as i32 * (s.gpu + s.gap), inner.1);
                let holder = holders.gpus.get(gpu).copied().flatten();
                let label = s.labelled.then(|| format!("GPU {gpu}"));
                square(area, at, s.gpu, Pods::colour(holder), label)?;
            }
            let cores_top = inner.1
                + if l.gpus_per_numa > 0 {
                    s.gpu + 2 * s.gap
                } else {
                    0
                };
            let first = numa * t.cores_per_numa;
            for (i, core) in (first..first + t.cores_per_numa).enumerate() {
                let at = (
                    inner.0 + (i % l.cores_per_row) as i32 * (s.core + s.gap),
                    cores_top + (i / l.cores_per_row) as i32 * (s.core + s.gap),
                );
                let holder = holders.cores.get(core).copied().flatten();
                let label = s.labelled.then(|| core.to_string());
                square(area, at, s.core, Pods::colour(holder), label)?;
            }
        }
    }
    Ok(())
}
