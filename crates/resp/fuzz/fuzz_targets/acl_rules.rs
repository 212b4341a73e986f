//! Fuzz target: ACL SETUSER ops and ACL files of any bytes: every op applies or is refused,
//! every file loads or reports its errors, and what ACL LIST says about a user loads back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_resp::fuzz_acl(data);
});
