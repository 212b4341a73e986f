//! The enumerated settings: `sslmode`, `channel_binding`, `target_session_attrs`, `load_balance_hosts`.

use std::fmt;

/// Declares a settings enum with its keyword spellings, in the order libpq documents them.
macro_rules! keyword_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in the order libpq documents them.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The value as written in a connection string.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// Parses the connection-string spelling (case-sensitive, as libpq).
            pub fn from_keyword_value(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The accepted spellings, comma separated, for error messages.
            pub(crate) fn accepted() -> String {
                [$($text,)+].join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

keyword_enum! {
    /// Whether and how TLS is used (`sslmode`). The default is [`SslMode::Prefer`].
    SslMode {
        /// Plain connection only.
        Disable = "disable",
        /// Try plain first; use TLS if the server insists.
        Allow = "allow",
        /// Try TLS first; fall back to plain if the server does not offer it.
        Prefer = "prefer",
        /// TLS required; the certificate is not verified.
        Require = "require",
        /// TLS required; the certificate chain is verified against the root certificates.
        VerifyCa = "verify-ca",
        /// As `VerifyCa`, and the server's name must match its certificate.
        VerifyFull = "verify-full",
    }
}

impl SslMode {
    /// Whether the server certificate is verified (`verify-ca` or `verify-full`).
    pub fn verifies_certificate(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

keyword_enum! {
    /// Whether SCRAM channel binding is used (`channel_binding`). The default is
    /// [`ChannelBinding::Prefer`].
    ChannelBinding {
        /// Never use channel binding.
        Disable = "disable",
        /// Use it when the server and the TLS connection allow it.
        Prefer = "prefer",
        /// Fail unless channel binding is used.
        Require = "require",
    }
}

keyword_enum! {
    /// Which kind of server a connection must reach (`target_session_attrs`). The default is
    /// [`TargetSessionAttrs::Any`].
    TargetSessionAttrs {
        /// Any server.
        Any = "any",
        /// A server accepting read-write transactions by default.
        ReadWrite = "read-write",
        /// A server accepting only read-only transactions by default.
        ReadOnly = "read-only",
        /// A server that is not in hot standby.
        Primary = "primary",
        /// A server in hot standby.
        Standby = "standby",
        /// A standby if one of the hosts is, else any server.
        PreferStandby = "prefer-standby",
    }
}

keyword_enum! {
    /// The order in which hosts are tried (`load_balance_hosts`). The default is
    /// [`LoadBalanceHosts::Disable`].
    LoadBalanceHosts {
        /// In the order given.
        Disable = "disable",
        /// In a random order, chosen anew for each connection.
        Random = "random",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for mode in SslMode::ALL {
            assert_eq!(SslMode::from_keyword_value(mode.as_str()), Some(*mode));
        }
        for t in TargetSessionAttrs::ALL {
            assert_eq!(
                TargetSessionAttrs::from_keyword_value(&t.to_string()),
                Some(*t)
            );
        }
        assert_eq!(SslMode::from_keyword_value("Require"), None);
        assert_eq!(
            SslMode::accepted(),
            "disable, allow, prefer, require, verify-ca, verify-full"
        );
        assert_eq!(ChannelBinding::accepted(), "disable, prefer, require");
        assert_eq!(LoadBalanceHosts::accepted(), "disable, random");
    }
}
