//! Where the seeded fill may put its next pod, kept up to date as the fill adds and removes
//! pods. The fill places one pod per step on a cluster of up to `MAX_SERVERS` servers; a pass
//! over every server per step made a fill grow with the square of the cluster. The index
//! answers each step's question in a logarithm of the servers and is refreshed for the one
//! server a step changes, while picking exactly the server the pass picked: the same draws of
//! the seeded generator, the same tie-breaks.

use std::collections::BTreeSet;

use crate::rng::SeededRng;
use crate::spec::preemption::FillAllocator;
use crate::topology::state::ClusterState;
use crate::topology::{Request, ServerId};

/// Free GPUs and free cores of one server, as the index last saw them.
type Room = (u32, u32);

/// The servers with room for one request, counted by position (a Fenwick tree over the
/// server indices), so that "the k-th server with room, in index order" — the random
/// allocator's draw — takes a logarithm of the servers.
#[derive(Debug, Clone)]
struct ServersWithRoom {
    request: Request,
    /// Fenwick tree, 1-based: `tree[i]` counts the servers with room in `(i - lowbit(i), i]`.
    tree: Vec<u32>,
    has_room: Vec<bool>,
    count: usize,
}

impl ServersWithRoom {
    fn new(request: Request, rooms: &[Room]) -> Self {
        let has_room: Vec<bool> = rooms.iter().map(|&r| fits(r, request)).collect();
        // Linear build: each slot adds itself to its parent once.
        let mut tree = vec![0u32; rooms.len() + 1];
        for (i, &room) in has_room.iter().enumerate() {
            let slot = i + 1;
            tree[slot] += u32::from(room);
            let parent = slot + lowest_bit(slot);
            if parent < tree.len() {
                tree[parent] += tree[slot];
            }
        }
        let count = has_room.iter().filter(|&&r| r).count();
        ServersWithRoom {
            request,
            tree,
            has_room,
            count,
        }
    }

    fn update(&mut self, server: usize, room: Room) {
        let now = fits(room, self.request);
        if now == self.has_room[server] {
            return;
        }
        self.has_room[server] = now;
        let mut slot = server + 1;
        while slot < self.tree.len() {
            if now {
                self.tree[slot] += 1;
            } else {
                self.tree[slot] -= 1;
            }
            slot += lowest_bit(slot);
        }
        if now {
            self.count += 1;
        } else {
            self.count -= 1;
        }
    }

    /// The index of the `k`-th (from 0) server with room, in ascending index order.
    fn nth(&self, k: usize) -> Option<usize> {
        if k >= self.count {
            return None;
        }
        let mut remaining = k as u32;
        let mut position = 0usize;
        let mut step = (self.tree.len() - 1).next_power_of_two();
        while step > 0 {
            let next = position + step;
            if next < self.tree.len() && self.tree[next] <= remaining {
                position = next;
                remaining -= self.tree[next];
            }
            step /= 2;
        }
        // `position` servers come before it, so it is slot `position + 1`, index `position`.
        Some(position)
    }
}

fn lowest_bit(i: usize) -> usize {
    i & i.wrapping_neg()
}

fn fits(room: Room, request: Request) -> bool {
    room.0 >= request.gpus && room.1 >= request.cores
}

/// The fill's view of the cluster: the free GPUs in total (how far the fill has gone) and,
/// for the allocator in use, the servers ordered the way it chooses among them.
#[derive(Debug, Clone)]
pub struct FillIndex {
    allocator: FillAllocator,
    rooms: Vec<Room>,
    free_gpus: u64,
    /// Best fit and spread: every server keyed by (free GPUs, free cores, index).
    by_room: BTreeSet<(u32, u32, u32)>,
    /// Random and NUMA-aligned: one count per request asked so far (a fill mix has a few).
    with_room: Vec<ServersWithRoom>,
}

impl FillIndex {
    /// The index of `state` as it is now, ordered for `allocator`.
    pub fn new(state: &ClusterState, allocator: FillAllocator) -> Self {
        let rooms: Vec<Room> = state
            .servers()
            .iter()
            .map(|s| (s.free_gpus().len(), s.free_cores().len()))
            .collect();
        let free_gpus = rooms.iter().map(|r| u64::from(r.0)).sum();
        let by_room = match allocator {
            FillAllocator::BestFit | FillAllocator::Spread => rooms
                .iter()
                .enumerate()
                .map(|(i, r)| (r.0, r.1, i as u32))
                .collect(),
            FillAllocator::Random | FillAllocator::NumaAligned => BTreeSet::new(),
        };
        FillIndex {
            allocator,
            rooms,
            free_gpus,
            by_room,
            with_room: Vec::new(),
        }
    }

    /// Free GPUs over the whole cluster.
    pub fn free_gpus(&self) -> u64 {
        self.free_gpus
    }

    /// Takes in a change of `server` (a pod added or evicted there).
    pub fn refresh(&mut self, state: &ClusterState, server: ServerId) {
        let i = server.index();
        let Some(alloc) = state.servers().get(i) else {
            return;
        };
        let old = self.rooms[i];
        let new = (alloc.free_gpus().len(), alloc.free_cores().len());
        if old == new {
            return;
        }
        self.rooms[i] = new;
        self.free_gpus = self.free_gpus - u64::from(old.0) + u64::from(new.0);
        if matches!(
            self.allocator,
            FillAllocator::BestFit | FillAllocator::Spread
        ) {
            self.by_room.remove(&(old.0, old.1, i as u32));
            self.by_room.insert((new.0, new.1, i as u32));
        }
        for counts in &mut self.with_room {
            counts.update(i, new);
        }
    }

    /// The server the topology-blind default scheduler picks for `request`, drawing from
    /// `rng` as the pass over every server did: the random allocators draw one of the servers
    /// with room (none drawn when none has room); best fit takes the least free GPUs, then
    /// cores, then the lowest index; spread the most, then the lowest index.
    pub fn choose_server(&mut self, request: Request, rng: &mut SeededRng) -> Option<ServerId> {
        let index = match self.allocator {
            FillAllocator::Random | FillAllocator::NumaAligned => {
                let counts = self.counts_for(request);
                if counts.count == 0 {
                    return None;
                }
                let k = rng.below(counts.count);
                counts.nth(k)? as u32
            }
            FillAllocator::BestFit => self.tightest(request)?,
            FillAllocator::Spread => self.roomiest(request)?,
        };
        Some(ServerId(index))
    }

    fn counts_for(&mut self, request: Request) -> &ServersWithRoom {
        let at = match self.with_room.iter().position(|c| c.request == request) {
            Some(at) => at,
            None => {
                self.with_room
                    .push(ServersWithRoom::new(request, &self.rooms));
                self.with_room.len() - 1
            }
        };
        &self.with_room[at]
    }

    /// The least (free GPUs, free cores, index) with room. Within one free-GPU count the
    /// first entry at or above the requested cores is that count's best; a count whose
    /// entries all lack cores is skipped whole, so the walk visits each count once at most.
    fn tightest(&self, request: Request) -> Option<u32> {
        let mut from = (request.gpus, request.cores, 0);
        loop {
            let &(gpus, cores, index) = self.by_room.range(from..).next()?;
            if cores >= request.cores {
                return Some(index);
            }
            from = (gpus, request.cores, 0);
        }
    }

    /// The most free GPUs, then the most free cores, then the lowest index, with room.
    fn roomiest(&self, request: Request) -> Option<u32> {
        let mut below: Option<(u32, u32, u32)> = None;
        loop {
            let &(gpus, cores, _) = match below {
                Some(end) => self.by_room.range(..end).next_back()?,
                None => self.by_room.iter().next_back()?,
            };
            if gpus < request.gpus {
                return None;
            }
            if cores >= request.cores {
                // The last entry of a free-GPU count holds its most cores; the lowest index
                // with those is the first entry of that (GPUs, cores) pair.
                return self.by_room.range((gpus, cores, 0)..).next().map(|e| e.2);
            }
            below = Some((gpus, 0, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_server_with_room_counts_in_index_order() {
        let rooms = [(1, 7), (0, 0), (2, 14), (1, 3), (8, 64), (1, 7)];
        let request = Request::plain(1, 7);
        let mut counts = ServersWithRoom::new(request, &rooms);
        let all: Vec<Option<usize>> = (0..5).map(|k| counts.nth(k)).collect();
        assert_eq!(all, vec![Some(0), Some(2), Some(4), Some(5), None]);
        counts.update(2, (0, 0));
        counts.update(1, (1, 7));
        let all: Vec<Option<usize>> = (0..5).map(|k| counts.nth(k)).collect();
        assert_eq!(all, vec![Some(0), Some(1), Some(4), Some(5), None]);
    }
}
