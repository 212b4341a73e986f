//! `Preference-Applied`: which of a request's preferences its kind of request honoured, listed
//! in PostgREST's order (resolution, missing, return, params, count, tx, handling, timezone,
//! max-affected).

use crate::request::{
    Method, PreferCount, PreferHandling, PreferMissing, PreferParams, PreferResolution,
    PreferReturn, PreferTx, Preferences,
};
use http::HeaderValue;

/// The kinds of request whose preferences differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applying {
    /// GET or HEAD of a table or view.
    Read,
    /// POST to a table.
    Create,
    /// PATCH.
    Update,
    /// PUT (PostgREST's single upsert).
    Put,
    /// DELETE.
    Delete,
    /// A function call.
    Call,
    /// A batch's own request (`POST /`): its operations share its transaction and context, so
    /// its `tx=` and `timezone=` are the ones applied; each operation lists its own others.
    Batch,
}

impl Applying {
    /// The kind of a write to a table by `method` (`None` for a method that does not write).
    pub fn of_write(method: Method) -> Option<Applying> {
        match method {
            Method::Post => Some(Applying::Create),
            Method::Patch => Some(Applying::Update),
            Method::Put => Some(Applying::Put),
            Method::Delete => Some(Applying::Delete),
            Method::Get | Method::Head | Method::Options => None,
        }
    }
}

/// What the request's context made of the preferences that depend on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Honoured<'a> {
    /// `tx=` decides how the transaction ends (the settings allow overriding it).
    pub tx: bool,
    /// The time zone the transaction runs in (`timezone=` naming one the server knows).
    pub timezone: Option<&'a str>,
}

/// The header's value, `None` when nothing was applied.
pub fn preference_applied(
    kind: Applying,
    prefer: &Preferences,
    honoured: Honoured<'_>,
) -> Option<HeaderValue> {
    use Applying::*;
    let mut applied: Vec<&str> = Vec::new();
    // A POST's resolution is already set aside (`ignored_resolution`) when the table has no
    // key and no `on_conflict=` names one: it is then not applied.
    if kind == Create {
        applied.extend(prefer.resolution.map(|r| match r {
            PreferResolution::MergeDuplicates => "resolution=merge-duplicates",
            PreferResolution::IgnoreDuplicates => "resolution=ignore-duplicates",
        }));
    }
    if matches!(kind, Create | Update) {
        applied.extend(prefer.missing.map(|m| match m {
            PreferMissing::Default => "missing=default",
            PreferMissing::Null => "missing=null",
        }));
    }
    if matches!(kind, Create | Update | Put | Delete) {
        applied.extend(prefer.return_.map(|r| match r {
            PreferReturn::Minimal => "return=minimal",
            PreferReturn::HeadersOnly => "return=headers-only",
            PreferReturn::Representation => "return=representation",
        }));
    }
    if kind == Call {
        applied.extend(prefer.params.map(|p| match p {
            PreferParams::SingleObject => "params=single-object",
        }));
    }
    if kind != Batch {
        applied.extend(prefer.count.map(|c| match c {
            PreferCount::Exact => "count=exact",
            PreferCount::Planned => "count=planned",
            PreferCount::Estimated => "count=estimated",
        }));
    }
    if honoured.tx {
        applied.extend(prefer.tx.map(|t| match t {
            PreferTx::Commit => "tx=commit",
            PreferTx::Rollback => "tx=rollback",
        }));
    }
    if kind != Batch {
        applied.extend(prefer.handling.map(|h| match h {
            PreferHandling::Strict => "handling=strict",
            PreferHandling::Lenient => "handling=lenient",
        }));
    }
    let timezone = honoured.timezone.map(|zone| format!("timezone={zone}"));
    applied.extend(timezone.as_deref());
    // max-affected is enforced only under handling=strict, on updates, deletes and calls (a
    // call's result rows).
    let max_affected = prefer
        .max_affected
        .filter(|_| matches!(kind, Update | Delete | Call))
        .filter(|_| prefer.handling == Some(PreferHandling::Strict))
        .map(|n| format!("max-affected={n}"));
    applied.extend(max_affected.as_deref());
    if applied.is_empty() {
        return None;
    }
    HeaderValue::from_str(&applied.join(", ")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn everything() -> Preferences {
        Preferences {
            return_: Some(PreferReturn::Representation),
            count: Some(PreferCount::Exact),
            resolution: Some(PreferResolution::MergeDuplicates),
            missing: Some(PreferMissing::Default),
            handling: Some(PreferHandling::Strict),
            tx: Some(PreferTx::Rollback),
            max_affected: Some(5),
            params: Some(PreferParams::SingleObject),
            ..Preferences::default()
        }
    }

    fn listed(kind: Applying, prefer: &Preferences, honoured: Honoured<'_>) -> String {
        preference_applied(kind, prefer, honoured)
            .map(|v| v.to_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    }

    #[test]
    fn each_kind_lists_its_own_in_postgrest_order() {
        let prefer = everything();
        let honoured = Honoured {
            tx: true,
            timezone: Some("UTC"),
        };
        let tail = "count=exact, tx=rollback, handling=strict, timezone=UTC";
        assert_eq!(listed(Applying::Read, &prefer, honoured), tail);
        assert_eq!(
            listed(Applying::Create, &prefer, honoured),
            format!("resolution=merge-duplicates, missing=default, return=representation, {tail}")
        );
        assert_eq!(
            listed(Applying::Update, &prefer, honoured),
            format!("missing=default, return=representation, {tail}, max-affected=5")
        );
        assert_eq!(
            listed(Applying::Put, &prefer, honoured),
            format!("return=representation, {tail}")
        );
        assert_eq!(
            listed(Applying::Delete, &prefer, honoured),
            format!("return=representation, {tail}, max-affected=5")
        );
        assert_eq!(
            listed(Applying::Call, &prefer, honoured),
            format!("params=single-object, {tail}, max-affected=5")
        );
        assert_eq!(
            listed(Applying::Batch, &prefer, honoured),
            "tx=rollback, timezone=UTC"
        );
    }

    #[test]
    fn tx_timezone_and_max_affected_only_when_honoured() {
        let prefer = Preferences {
            handling: Some(PreferHandling::Lenient),
            ..everything()
        };
        assert_eq!(
            listed(Applying::Delete, &prefer, Honoured::default()),
            "return=representation, count=exact, handling=lenient"
        );
        assert_eq!(
            preference_applied(Applying::Read, &Preferences::default(), Honoured::default()),
            None
        );
    }
}
