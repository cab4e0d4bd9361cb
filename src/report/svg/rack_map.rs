//! `coplan topology --format svg` of a cluster with levels above the server (DESIGN §12.3): a
//! rack map. Each domain of the outermost named level is a labelled box holding the boxes of
//! its domains at the next level, and so on down to the hosts, drawn as tiles showing their
//! GPU count and coloured by server type. Boxes and tiles flow left to right in near-square
//! rows, in the fabric's order (domains by their first server), and tiles shrink as the
//! cluster grows, so that a thousand hosts stay on one readable page. Static topology only:
//! the pods of a workload are the server map's to show.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::error::SvgError;
use super::style::{
    Area, INK, LegendEntry, MARGIN, MUTED, Mark, OUTLINE, POD_PALETTE, fit, header, ink_on, legend,
    legend_height, no_data, render, text, text_width,
};
use crate::report::fabric::{DomainTree, count, gpus_of, penalty_text};
use crate::topology::{Cluster, FabricLevel, ServerId};

const HEADER_HEIGHT: u32 = 62;
const MIN_WIDTH: i32 = 1000;
/// The width the outermost boxes flow in before they wrap.
const FLOW_WIDTH: i32 = 1200 - 2 * MARGIN;
/// Space between the outermost boxes.
const OUTER_GAP: i32 = 12;
/// Fills of the boxes by depth, alternating so that nested boxes stand apart (each drawn
/// over its outer box's fill).
const BOX_FILLS: [RGBColor; 2] = [RGBColor(0xF2, 0xF2, 0xF2), WHITE];
/// Tile colours of the server types, in their order in the cluster: the light entries of the
/// pod palette, so that the dark GPU counts read on every one.
const TYPE_COLOURS: [usize; 9] = [9, 11, 1, 13, 5, 15, 7, 17, 3];
/// A box is widened for its label up to this many tiles.
const MAX_LABEL_TILES: i32 = 8;

/// Sizes of one drawing scale, in pixels.
struct Scale {
    tile: i32,
    gap: i32,
    pad: i32,
    /// Height of a box's label line.
    label: i32,
    label_size: f64,
    /// Font size of a tile's GPU count (none when 0: the tiles are too small).
    count_size: f64,
}

/// The scale of a map of `hosts` hosts: smaller tiles for more hosts.
fn scale_for(hosts: usize) -> Scale {
    let (tile, gap, pad, label, label_size, count_size) = match hosts {
        0..=64 => (40, 4, 6, 20, 13.0, 15.0),
        65..=256 => (28, 3, 5, 17, 12.0, 12.0),
        257..=1024 => (18, 2, 4, 15, 11.0, 9.0),
        _ => (10, 1, 3, 13, 10.0, 0.0),
    };
    Scale {
        tile,
        gap,
        pad,
        label,
        label_size,
        count_size,
    }
}

/// A box laid out: its domain, its size and what it holds, each at its offset from the box's
/// top left corner (the domains of the next level, or its hosts at the innermost named level).
struct Placed {
    level: FabricLevel,
    index: usize,
    size: (i32, i32),
    inner: Vec<((i32, i32), Placed)>,
    hosts: Vec<((i32, i32), ServerId)>,
}

/// Positions of items of `sizes` flowed left to right in rows no wider than `width` (an item
/// wider than that alone on its row), and the extent they cover.
fn flow(sizes: &[(i32, i32)], width: i32, gap: i32) -> (Vec<(i32, i32)>, (i32, i32)) {
    let (mut x, mut y, mut row_height, mut extent_w) = (0, 0, 0, 0);
    let mut at = Vec::with_capacity(sizes.len());
    for &(w, h) in sizes {
        if x > 0 && x + w > width {
            x = 0;
            y += row_height + gap;
            row_height = 0;
        }
        at.push((x, y));
        extent_w = extent_w.max(x + w);
        row_height = row_height.max(h);
        x += w + gap;
    }
    (at, (extent_w, y + row_height))
}

/// The row width that puts `n` items of width up to `widest` in about √n columns.
fn square_width(n: usize, widest: i32, gap: i32) -> i32 {
    let columns = (n as f64).sqrt().ceil().max(1.0) as i32;
    columns * (widest + gap) - gap
}

/// Lays out domain `index` of `level` and everything inside it: wide enough for its label up
/// to `MAX_LABEL_TILES` tiles (a longer label is cut).
fn lay_out(
    cluster: &Cluster,
    tree: &DomainTree,
    (level, index): (FabricLevel, usize),
    s: &Scale,
) -> Placed {
    let inner_level = FabricLevel(level.0 + 1);
    let mut placed = Placed {
        level,
        index,
        size: (0, 0),
        inner: Vec::new(),
        hosts: Vec::new(),
    };
    let origin = (s.pad, s.label + s.pad);
    let extent = if inner_level == tree.fabric.host() {
        let servers = tree.domain(level, index).map_or(&[][..], |d| &d.servers);
        let sizes = vec![(s.tile, s.tile); servers.len()];
        let width = square_width(servers.len(), s.tile, s.gap);
        let (at, extent) = flow(&sizes, width, s.gap);
        placed.hosts = (at.into_iter().zip(servers))
            .map(|((x, y), id)| ((origin.0 + x, origin.1 + y), *id))
            .collect();
        extent
    } else {
        let mut children: Vec<Placed> = (tree.children(level, index).iter())
            .map(|c| lay_out(cluster, tree, (inner_level, *c), s))
            .collect();
        // Siblings share the size of the largest, so that they line up in a grid.
        let cell = children
            .iter()
            .fold((0, 0), |(w, h), c| (w.max(c.size.0), h.max(c.size.1)));
        for c in &mut children {
            c.size = cell;
        }
        let sizes = vec![cell; children.len()];
        let gap = s.pad;
        let (at, extent) = flow(&sizes, square_width(sizes.len(), cell.0, gap), gap);
        placed.inner = (at.into_iter().zip(children))
            .map(|((x, y), c)| ((origin.0 + x, origin.1 + y), c))
            .collect();
        extent
    };
    let label = box_label(cluster, tree, level, index).map_or(0, |l| {
        text_width(&l, s.label_size).min(MAX_LABEL_TILES * (s.tile + s.gap))
    });
    placed.size = (
        extent.0.max(label) + 2 * s.pad,
        s.label + extent.1 + 2 * s.pad,
    );
    placed
}

/// The tile colour of a server type.
fn type_colour(type_index: usize) -> RGBColor {
    POD_PALETTE[TYPE_COLOURS[type_index % TYPE_COLOURS.len()]]
}

/// The rack map of a cluster with named levels (a cluster without is drawn as by the server
/// map: this is not called for one).
pub fn rack_map(cluster: &Cluster) -> Result<String, SvgError> {
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
    let tree = DomainTree::of(&cluster.fabric);
    let fabric = tree.fabric;
    let s = scale_for(cluster.servers.len());
    let top = tree.outermost();
    let boxes: Vec<Placed> = (0..fabric.domains_at(top).len())
        .map(|d| lay_out(cluster, &tree, (top, d), &s))
        .collect();
    let sizes: Vec<(i32, i32)> = boxes.iter().map(|b| b.size).collect();
    let (at, extent) = flow(&sizes, FLOW_WIDTH, OUTER_GAP);
    let width = (extent.0 + 2 * MARGIN).max(MIN_WIDTH) as u32;
    let penalties: Vec<String> = (0..fabric.levels.len())
        .map(|l| {
            let level = FabricLevel(l as u16);
            format!(
                "{} {}",
                fabric.level_name(level),
                penalty_text(fabric.penalty_of(level))
            )
        })
        .collect();
    let named: Vec<&str> = (tree.named_levels())
        .map(|l| fabric.level_name(l))
        .collect();
    let subtitle = format!(
        "boxes: {}; tiles: hosts with their GPU count; gang penalty: {}",
        named.join(" > "),
        penalties.join(", ")
    );
    let entries: Vec<LegendEntry> = (cluster.types.iter().enumerate())
        .map(|(i, t)| LegendEntry {
            label: format!("{} ({} GPUs)", t.name, t.gpu_count()),
            colour: type_colour(i),
            mark: Mark::Swatch,
        })
        .collect();
    let height = HEADER_HEIGHT + legend_height(&entries, width) + extent.1 as u32 + 20;
    render((width, height), |root| {
        let body = header(root, &title, Some(&subtitle))?;
        let body = legend(&body, &entries)?;
        for ((x, y), b) in at.iter().zip(&boxes) {
            draw_box(&body, cluster, &tree, b, (MARGIN + x, 6 + y), &s)?;
        }
        Ok(())
    })
}

/// The label of a box: its level and domain name, with its hosts and GPUs on the outermost.
fn box_label(
    cluster: &Cluster,
    tree: &DomainTree,
    level: FabricLevel,
    index: usize,
) -> Option<String> {
    let d = tree.domain(level, index)?;
    let label = format!("{} {}", tree.fabric.level_name(level), d.name);
    Some(if level == tree.outermost() {
        format!(
            "{label}: {}, {}",
            count(d.servers.len(), "host"),
            count(gpus_of(cluster, &d.servers), "GPU")
        )
    } else {
        label
    })
}

/// Draws a laid-out box at `(x, y)`: its frame and label, then what it holds.
fn draw_box(
    area: &Area,
    cluster: &Cluster,
    tree: &DomainTree,
    b: &Placed,
    (x, y): (i32, i32),
    s: &Scale,
) -> Result<(), SvgError> {
    let depth = b.level.index().saturating_sub(1);
    let fill = BOX_FILLS[depth % BOX_FILLS.len()];
    let corner = (x + b.size.0, y + b.size.1);
    area.draw(&Rectangle::new([(x, y), corner], fill.filled()))?;
    area.draw(&Rectangle::new([(x, y), corner], OUTLINE.stroke_width(1)))?;
    if let Some(label) = box_label(cluster, tree, b.level, b.index) {
        let colour = if depth == 0 { INK } else { MUTED };
        area.draw_text(
            &fit(&label, s.label_size, b.size.0 - 2 * s.pad),
            &text(s.label_size, colour, HPos::Left, VPos::Center),
            (x + s.pad, y + s.pad / 2 + s.label / 2),
        )?;
    }
    for ((dx, dy), inner) in &b.inner {
        draw_box(area, cluster, tree, inner, (x + dx, y + dy), s)?;
    }
    for ((dx, dy), id) in &b.hosts {
        let server = cluster.server(*id);
        let colour = type_colour(server.type_id.index());
        let (tx, ty) = (x + dx, y + dy);
        area.draw(&Rectangle::new(
            [(tx, ty), (tx + s.tile, ty + s.tile)],
            colour.filled(),
        ))?;
        if s.count_size > 0.0 {
            area.draw_text(
                &cluster.type_of(*id).gpu_count().to_string(),
                &text(s.count_size, ink_on(colour), HPos::Center, VPos::Center),
                (tx + s.tile / 2, ty + s.tile / 2),
            )?;
        }
    }
    Ok(())
}
