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
    /// Execute, but write wrong output block signatures (every block).
    BadOutputSignature,
    /// Execute, but write one field of the completion wrong.
    Corrupt(Corruption),
}

/// A field of a completion (command entry or output mailbox) the device writes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorruptField {
    /// Entry `output_length` (bytes 0x38..0x3c).
    OutLen,
    /// Entry `token` (byte 0x3c).
    EntryToken,
    /// Entry `signature` (byte 0x3d).
    EntrySig,
    /// Entry `ownership` left set: output and status written, completion event posted,
    /// but the entry still says hardware owns it.
    Own,
    /// Entry delivery `status` (bits 7:1 of byte 0x3f) set to the given value.
    Status,
    /// Output mailbox `block_number`.
    BlockNum,
    /// Output mailbox `token`.
    BlockToken,
    /// Output mailbox `next_pointer`.
    BlockNext,
    /// Output mailbox `signature`.
    BlockSig,
}

impl CorruptField {
    /// Every field with its control-socket name.
    pub const ALL: &'static [(&'static str, CorruptField)] = &[
        ("out_len", CorruptField::OutLen),
        ("entry_token", CorruptField::EntryToken),
        ("entry_sig", CorruptField::EntrySig),
        ("own", CorruptField::Own),
        ("status", CorruptField::Status),
        ("block_num", CorruptField::BlockNum),
        ("block_token", CorruptField::BlockToken),
        ("block_next", CorruptField::BlockNext),
        ("block_sig", CorruptField::BlockSig),
    ];

    /// The control-socket name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }

    /// True for fields of an output mailbox (need an output of more than 16 bytes).
    pub fn in_block(self) -> bool {
        matches!(
            self,
            Self::BlockNum | Self::BlockToken | Self::BlockNext | Self::BlockSig
        )
    }
}

/// What to write wrong: `field`, in output block `block` (`None` = every block) for
/// mailbox fields, with `value` (`None` = the right value with bits flipped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corruption {
    /// The field.
    pub field: CorruptField,
    /// Output block index for mailbox fields (`None` = every block).
    pub block: Option<usize>,
    /// The value to write instead of the right one.
    pub value: Option<u64>,
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
        self.rules.push(Rule {
            opcode,
            action,
            remaining: count,
            hits: 0,
        });
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
