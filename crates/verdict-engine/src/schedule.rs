//! The order of iterations. Pure: a seed and the active cells in, the next
//! block's cells out. Randomized complete blocks (every active cell once per
//! block, in an order drawn from the recorded seed) cancel drift; the
//! sequential order runs a cell to completion before the next for expensive
//! level switches. The same seed always gives the same schedule, which is
//! what makes `--resume` continue exactly where a run stopped.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use verdict_model::Order;

/// One scheduled iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Index into `Experiment::cells()`.
    pub cell: usize,
    /// Block number (warmup blocks first).
    pub block: u32,
    pub warmup: bool,
}

/// The order of one interleaved block: `active` cells permuted by a
/// generator seeded from (seed, block), so a block's order does not depend
/// on how many blocks came before or which cells dropped out earlier.
/// O(cells).
pub fn block_order(seed: u64, block: u32, active: &[usize]) -> Vec<usize> {
    let mut order = active.to_vec();
    let mut generator =
        ChaCha8Rng::seed_from_u64(seed ^ (u64::from(block).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    order.shuffle(&mut generator);
    order
}

/// The full fixed schedule: warmups then measured iterations, for `cells`
/// cells. Interleaved: `warmups` warmup blocks then `iterations` blocks.
/// Sequential: cell by cell, each cell's warmups first. O(cells x
/// (iterations + warmups)).
pub fn fixed_schedule(
    cells: usize,
    iterations: u32,
    warmups: u32,
    order: Order,
    seed: u64,
) -> Vec<Slot> {
    let all: Vec<usize> = (0..cells).collect();
    let mut slots = Vec::with_capacity(cells * (iterations + warmups) as usize);
    match order {
        Order::Interleaved => {
            for block in 0..warmups + iterations {
                for cell in block_order(seed, block, &all) {
                    slots.push(Slot {
                        cell,
                        block,
                        warmup: block < warmups,
                    });
                }
            }
        }
        Order::Sequential => {
            for cell in all {
                for block in 0..warmups + iterations {
                    slots.push(Slot {
                        cell,
                        block,
                        warmup: block < warmups,
                    });
                }
            }
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_blocks_hold_every_cell_once_and_vary_in_order() {
        let slots = fixed_schedule(4, 20, 1, Order::Interleaved, 7);
        assert_eq!(slots.len(), 4 * 21);
        for block in slots.chunks(4) {
            let mut cells: Vec<usize> = block.iter().map(|slot| slot.cell).collect();
            cells.sort_unstable();
            assert_eq!(cells, vec![0, 1, 2, 3]);
            assert!(block.iter().all(|slot| slot.block == block[0].block));
        }
        assert!(slots[..4].iter().all(|slot| slot.warmup));
        assert!(slots[4..].iter().all(|slot| !slot.warmup));
        let distinct: std::collections::HashSet<Vec<usize>> = slots
            .chunks(4)
            .map(|block| block.iter().map(|slot| slot.cell).collect())
            .collect();
        assert!(distinct.len() > 5, "orders should vary between blocks");
    }

    #[test]
    fn same_seed_same_schedule_other_seed_other_schedule() {
        let first = fixed_schedule(3, 10, 0, Order::Interleaved, 42);
        assert_eq!(first, fixed_schedule(3, 10, 0, Order::Interleaved, 42));
        assert_ne!(first, fixed_schedule(3, 10, 0, Order::Interleaved, 43));
    }

    #[test]
    fn first_cell_is_not_always_first() {
        // Drift cancels only if each cell takes each position equally often.
        let slots = fixed_schedule(2, 400, 0, Order::Interleaved, 1);
        let first_of_block = slots.chunks(2).filter(|block| block[0].cell == 0).count();
        assert!((150..=250).contains(&first_of_block), "{first_of_block}");
    }

    #[test]
    fn sequential_runs_each_cell_to_completion() {
        let slots = fixed_schedule(2, 3, 1, Order::Sequential, 5);
        let cells: Vec<usize> = slots.iter().map(|slot| slot.cell).collect();
        assert_eq!(cells, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        assert!(slots[0].warmup && !slots[1].warmup && slots[4].warmup);
    }
}
