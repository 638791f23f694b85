//! QUERY_PAGES and MANAGE_PAGES against the page ledger.

use super::pages::{GiveError, Queued};
use super::util::{bad_param, get, need_in, put, CmdResult};
use super::{syndrome, Env, Firmware};
use crate::ifc::opcodes::{manage_pages_op_mod as mp, query_pages_op_mod as qp};
use crate::ifc::pages::{
    self as p, manage_pages_in, manage_pages_out, query_pages_in, query_pages_out,
};
use crate::ifc::status::CmdStatus;

impl Firmware {
    pub(super) fn query_pages(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let op_mod = get(input, query_pages_in::OP_MOD)? as u16;
        let func = get(input, query_pages_in::FUNCTION_ID)?;
        if func != 0 || get(input, query_pages_in::EMBEDDED_CPU_FUNCTION)? != 0 {
            return Err(bad_param());
        }
        let n: i32 = match op_mod {
            qp::BOOT => self.ledger.boot_demand as i32,
            qp::INIT => self.ledger.init_demand as i32,
            qp::REGULAR => self.ledger.regular_demand as i32,
            _ => return Err(bad_param()),
        };
        put(out, query_pages_out::FUNCTION_ID, func)?;
        put(out, query_pages_out::NUM_PAGES, u64::from(n as u32))
    }

    pub(super) fn manage_pages(
        &mut self,
        env: &Env<'_>,
        input: &[u8],
        out: &mut [u8],
    ) -> CmdResult {
        let op_mod = get(input, manage_pages_in::OP_MOD)? as u16;
        let func = get(input, manage_pages_in::FUNCTION_ID)? as u16;
        if func != 0 || get(input, manage_pages_in::EMBEDDED_CPU_FUNCTION)? != 0 {
            return Err(bad_param());
        }
        let n = get(input, manage_pages_in::INPUT_NUM_ENTRIES)? as usize;
        match op_mod {
            mp::ALLOCATION_FAIL => {
                // Answers the oldest give request (upstream `page_notify_fail`); the
                // pages it still wanted are no longer demanded.
                self.ledger.alloc_fail_reports += 1;
                if let Some(left) = self.ledger.requests.on_alloc_fail(func) {
                    self.ledger.runtime_demand = self.ledger.runtime_demand.saturating_sub(left);
                }
                Ok(())
            }
            mp::ALLOCATION_SUCCESS => {
                let end = n
                    .checked_mul(8)
                    .and_then(|b| b.checked_add(p::PAS_OFFSET))
                    .ok_or_else(bad_param)?;
                need_in(input, end)?;
                let addrs: Vec<u64> = (0..n)
                    .filter_map(|i| p::pas_get(input, p::PAS_OFFSET, i))
                    .collect();
                if let Err(e) = self.ledger.give(func, &addrs, env.mem) {
                    let why = match e {
                        GiveError::Null => "null page address".to_string(),
                        GiveError::Unaligned(a) => format!("page {a:#x} not 4 KiB aligned"),
                        GiveError::Unmapped(a) => format!("page {a:#x} outside guest memory"),
                        GiveError::Double(a) => format!("page {a:#x} given twice"),
                    };
                    self.stats
                        .violation(format!("MANAGE_PAGES give rejected: {why}"));
                    return Err((CmdStatus::BAD_PARAM_ERR, syndrome::BAD_PAGE));
                }
                self.ledger.requests.on_give(func, addrs.len() as u32);
                Ok(())
            }
            mp::HCA_RETURN_PAGES => {
                let room = out.len().saturating_sub(p::PAS_OFFSET) / 8;
                let want = n.min(p::MAX_RECLAIM_NPAGES as usize);
                if room < want {
                    self.ledger.rejected_takes += 1;
                    return Err((CmdStatus::BAD_OUTP_LEN_ERR, syndrome::BAD_OUTPUT_LEN));
                }
                let want = want as u32;
                let pinned = self.pinned_pages();
                let pages = match self.ledger.take_fault.take() {
                    Some((fault, count)) => {
                        let pages = self.ledger.take_with_fault(func, want, pinned, &fault);
                        self.ledger.take_faults += 1;
                        match count {
                            Some(c) if c <= 1 => {}
                            Some(c) => self.ledger.take_fault = Some((fault, Some(c - 1))),
                            None => self.ledger.take_fault = Some((fault, None)),
                        }
                        pages
                    }
                    None => self.ledger.take(func, want, pinned),
                };
                put(
                    out,
                    manage_pages_out::OUTPUT_NUM_ENTRIES,
                    pages.len() as u64,
                )?;
                for (i, a) in pages.iter().enumerate() {
                    p::pas_set(out, p::PAS_OFFSET, i, *a).ok_or_else(bad_param)?;
                }
                // The ask (input_num_entries, not what came back) answers take requests;
                // the part of a request it did not ask for is asked again (upstream caps
                // an event take at MAX_RECLAIM_NPAGES and relies on the firmware asking
                // again).
                let again = self
                    .ledger
                    .requests
                    .on_take(func, n.min(u32::MAX as usize) as u32);
                for rest in &again {
                    self.ledger.requests.reasked += 1;
                    let rest = i32::try_from(*rest).unwrap_or(i32::MAX);
                    self.ledger.requests.queued.push_back(Queued {
                        func,
                        num_pages: -rest,
                        release_all: false,
                        reask: true,
                    });
                }
                if !again.is_empty() {
                    self.pump_page_requests(env);
                }
                Ok(())
            }
            _ => Err(bad_param()),
        }
    }
}
