//! Randomised check of the page ledger against a plain model: thousands of
//! give / take / bogus take / double give / release-all operations, with
//! 4 KiB and larger host pages, and the counters, the store and the model
//! compared after every step.

use std::collections::{BTreeMap, BTreeSet};

use mlx5_rs_pure::pagealloc::ledger::{
    FuncKey, HostPage, Ledger, LedgerError, PageStore, Released, FW_PAGE_SIZE,
};

#[derive(Default)]
struct Store(BTreeMap<(FuncKey, u64), HostPage>);

impl PageStore for Store {
    fn get(&self, func: FuncKey, host: u64) -> Option<HostPage> {
        self.0.get(&(func, host)).copied()
    }
    fn update(&mut self, func: FuncKey, host: u64, page: HostPage) -> bool {
        self.0.get_mut(&(func, host)).map(|p| *p = page).is_some()
    }
    fn insert(&mut self, func: FuncKey, host: u64, page: HostPage) -> Result<(), ()> {
        self.0.insert((func, host), page);
        Ok(())
    }
    fn remove(&mut self, func: FuncKey, host: u64) -> Option<HostPage> {
        self.0.remove(&(func, host))
    }
    fn first(&self, func: FuncKey) -> Option<(u64, HostPage)> {
        self.0
            .range((func, 0)..=(func, u64::MAX))
            .next()
            .map(|(k, v)| (k.1, *v))
    }
    fn find_partial(&self, func: FuncKey, full: u64) -> Option<u64> {
        self.0
            .range((func, 0)..=(func, u64::MAX))
            .find(|(_, p)| p.given != full)
            .map(|(k, _)| k.1)
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
    // model: given fw pages per function; host pages per function
    let mut given: BTreeSet<(FuncKey, u64)> = BTreeSet::new();
    let mut hosts: BTreeSet<(FuncKey, u64)> = BTreeSet::new();
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
                    assert!(hosts.contains(&(func, a & !(host_page - 1))));
                }
                None => {
                    // the model agrees there is no free chunk for func
                    let chunks = host_page / FW_PAGE_SIZE;
                    for &(f, h) in hosts.iter().filter(|(f, _)| *f == func) {
                        let n = (0..chunks)
                            .filter(|c| given.contains(&(f, h + c * FW_PAGE_SIZE)))
                            .count();
                        assert_eq!(n as u64, chunks, "step {step}: free chunk missed in {h:#x}");
                    }
                    next_host += host_page * (1 + rng.below(3));
                    let a = l.add_host_page(&mut s, func, next_host).unwrap();
                    assert_eq!(a, next_host);
                    hosts.insert((func, next_host));
                    given.insert((func, a));
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
                let h = a & !(host_page - 1);
                let rest = given
                    .iter()
                    .any(|&(f, b)| f == func && b & !(host_page - 1) == h);
                match l.take(&mut s, func, a).unwrap() {
                    Released::Kept => assert!(rest, "step {step}"),
                    Released::HostPageFree(x) => {
                        assert_eq!(x, h);
                        assert!(!rest, "step {step}: host page freed while in use");
                        hosts.remove(&(func, h));
                        freed_hosts += 1;
                    }
                }
            }
            // bogus take: not given (free chunk, unknown page, other function)
            7 => {
                let a = next_host + host_page * 100 + FW_PAGE_SIZE * rng.below(4);
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
                    hosts.retain(|(f, _)| *f != func);
                    assert_eq!(n_hosts, hb - hosts.len());
                }
            }
        }
        // invariants
        assert_eq!(l.fw_pages(), given.len() as u64, "step {step}");
        assert_eq!(l.host_pages(), hosts.len() as u64, "step {step}");
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
