//! Randomised check of the page ledger against a plain model: thousands of
//! give / take / bogus take / double give / release-all operations, with
//! 4 KiB and larger host pages and blocks of one host page up to 2 MiB, and the counters, the store and the model
//! compared after every step.

use std::collections::{BTreeMap, BTreeSet};

use mlx5_rs_pure::pagealloc::ledger::{
    FuncKey, HostBlock, Ledger, LedgerError, PageStore, Released, FW_PAGE_SIZE, MAX_BLOCK_SIZE,
};

/// Blocks keyed by DMA address, as the kernel's RBTree store.
#[derive(Default)]
struct Store(BTreeMap<u64, (FuncKey, HostBlock)>);

impl PageStore for Store {
    fn floor(&self, addr: u64) -> Option<(FuncKey, u64, HostBlock)> {
        self.0
            .range(..=addr)
            .next_back()
            .map(|(&h, &(f, b))| (f, h, b))
    }
    fn update(&mut self, host: u64, block: HostBlock) -> bool {
        self.0.get_mut(&host).map(|e| e.1 = block).is_some()
    }
    fn insert(&mut self, func: FuncKey, host: u64, block: HostBlock) -> Result<(), ()> {
        self.0.insert(host, (func, block));
        Ok(())
    }
    fn remove(&mut self, host: u64) -> Option<HostBlock> {
        self.0.remove(&host).map(|e| e.1)
    }
    fn first(&self, func: FuncKey) -> Option<(u64, HostBlock)> {
        self.0
            .iter()
            .find(|(_, e)| e.0 == func)
            .map(|(&h, e)| (h, e.1))
    }
    fn find_partial(&self, func: FuncKey) -> Option<u64> {
        self.0
            .iter()
            .find(|(_, e)| e.0 == func && !e.1.is_full())
            .map(|(&h, _)| h)
    }
}

/// xorshift64*, deterministic.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn run(host_page: u64, seed: u64, steps: usize) {
    let mut l = Ledger::new(host_page).unwrap();
    let mut s = Store::default();
    let mut rng = Rng(seed);
    // model: given fw pages per function; blocks as (function, start, size)
    let mut given: BTreeSet<(FuncKey, u64)> = BTreeSet::new();
    let mut hosts: BTreeSet<(FuncKey, u64, u64)> = BTreeSet::new();
    let block_of = |hosts: &BTreeSet<(FuncKey, u64, u64)>, a: u64| {
        hosts
            .iter()
            .copied()
            .find(|&(_, h, size)| (h..h + size).contains(&a))
    };
    let mut next_host = 0x1_0000_0000u64;
    let mut freed_hosts = 0u64;

    for step in 0..steps {
        let func = rng.below(3) as FuncKey;
        match rng.below(10) {
            // give one page: a free chunk if any, else a new host page
            0..=3 => match l.give_free_chunk(&mut s, func) {
                Some(a) => {
                    assert!(
                        given.insert((func, a)),
                        "step {step}: chunk {a:#x} given twice"
                    );
                    assert_eq!(block_of(&hosts, a).map(|b| b.0), Some(func));
                }
                None => {
                    // the model agrees there is no free chunk for func
                    for &(f, h, size) in hosts.iter().filter(|b| b.0 == func) {
                        let chunks = size / FW_PAGE_SIZE;
                        let n = (0..chunks)
                            .filter(|c| given.contains(&(f, h + c * FW_PAGE_SIZE)))
                            .count();
                        assert_eq!(n as u64, chunks, "step {step}: free chunk missed in {h:#x}");
                    }
                    // A block of one host page up to 2 MiB, at an address aligned to a
                    // host page only, sometimes right after the previous block.
                    let max_shift = (MAX_BLOCK_SIZE / host_page).trailing_zeros() as u64;
                    let size = host_page << rng.below(max_shift + 1);
                    next_host += host_page * rng.below(3);
                    let a = l.add_block(&mut s, func, next_host, size).unwrap();
                    assert_eq!(a, next_host);
                    hosts.insert((func, next_host, size));
                    given.insert((func, a));
                    next_host += size;
                }
            },
            // take a page the device holds
            4..=6 => {
                let mine: Vec<u64> = given
                    .iter()
                    .filter(|(f, _)| *f == func)
                    .map(|&(_, a)| a)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                let a = mine[rng.below(mine.len() as u64) as usize];
                given.remove(&(func, a));
                let (_, h, size) = block_of(&hosts, a).unwrap();
                let rest = given
                    .iter()
                    .any(|&(f, b)| f == func && (h..h + size).contains(&b));
                match l.take(&mut s, func, a).unwrap() {
                    Released::Kept => assert!(rest, "step {step}"),
                    Released::HostPageFree(x) => {
                        assert_eq!(x, h);
                        assert!(!rest, "step {step}: block freed while in use");
                        hosts.remove(&(func, h, size));
                        freed_hosts += 1;
                    }
                }
            }
            // bogus take: not given (free chunk, unknown page, other function)
            7 => {
                let a = next_host + MAX_BLOCK_SIZE + FW_PAGE_SIZE * rng.below(4);
                assert!(matches!(
                    l.take(&mut s, func, a),
                    Err(LedgerError::UnknownPage(_))
                ));
                if let Some(&(f, a)) = given.iter().next() {
                    let other = (f + 1) % 3;
                    if !given.contains(&(other, a)) {
                        assert!(l.take(&mut s, other, a).is_err());
                    }
                }
            }
            // double give
            8 => {
                if let Some(&(f, a)) = given.iter().next() {
                    assert_eq!(l.give(&mut s, f, a), Err(LedgerError::DoubleGive(a)));
                }
            }
            // rarely: release everything of a function
            _ => {
                if rng.below(20) == 0 {
                    let mut n_hosts = 0;
                    let n = l.release_all(&mut s, func, |_| n_hosts += 1);
                    let before = given.len();
                    given.retain(|(f, _)| *f != func);
                    assert_eq!(n as usize, before - given.len());
                    let hb = hosts.len();
                    hosts.retain(|b| b.0 != func);
                    assert_eq!(n_hosts, hb - hosts.len());
                }
            }
        }
        // invariants
        assert_eq!(l.fw_pages(), given.len() as u64, "step {step}");
        assert_eq!(l.blocks(), hosts.len() as u64, "step {step}");
        assert_eq!(s.0.len(), hosts.len(), "step {step}");
        for f in 0..3 {
            let n = given.iter().filter(|(g, _)| *g == f).count() as u64;
            assert_eq!(l.func_pages(f), n, "step {step} func {f}");
        }
    }
    assert!(freed_hosts > 0);
}

#[test]
fn model_4k_pages() {
    run(4096, 0x1234_5678, 4000);
}

#[test]
fn model_16k_pages() {
    run(16384, 0xdead_beef, 6000);
}

#[test]
fn model_64k_pages() {
    run(65536, 42, 8000);
}
