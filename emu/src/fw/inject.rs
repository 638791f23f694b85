//! Fault injection rules set through the control socket.

use crate::ifc::status::DeliveryStatus;

/// What to do to a matching command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Complete it `ms` milliseconds late.
    Delay(u64),
    /// Never complete it (ownership stays with hardware).
    Never,
    /// Complete it with this command status and syndrome, without executing.
    Status(u8, u32),
    /// Report this delivery status, without executing.
    Delivery(DeliveryStatus),
    /// Execute, but write wrong output block signatures.
    BadOutputSignature,
}

/// One rule: applies to `opcode` (or every opcode) `remaining` more times.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Opcode to match, `None` = all.
    pub opcode: Option<u16>,
    /// Action.
    pub action: Action,
    /// Remaining uses, `None` = unlimited.
    pub remaining: Option<u32>,
    /// Times applied.
    pub hits: u64,
}

/// The rule set.
#[derive(Clone, Debug, Default)]
pub struct Injections {
    /// Rules in insertion order; the first match wins.
    pub rules: Vec<Rule>,
}

impl Injections {
    /// Adds a rule.
    pub fn add(&mut self, opcode: Option<u16>, action: Action, count: Option<u32>) {
        self.rules.push(Rule { opcode, action, remaining: count, hits: 0 });
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The action for `opcode`, consuming one use of the rule.
    pub fn take(&mut self, opcode: u16) -> Option<Action> {
        let i = self
            .rules
            .iter()
            .position(|r| r.opcode.is_none_or(|o| o == opcode) && r.remaining != Some(0))?;
        let r = &mut self.rules[i];
        r.hits += 1;
        if let Some(n) = r.remaining.as_mut() {
            *n -= 1;
        }
        Some(r.action.clone())
    }
}
