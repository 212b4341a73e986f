//! The computed fields of the exposed relations: functions over a relation's row type that
//! requests name like its columns (PostgREST's computed, or virtual, columns).

use super::model::{ComputedField, QualifiedName, SchemaCache};
use sluice_pg::Connection;
use std::collections::HashMap;

/// Functions of one required parameter (more only with defaults, all of them `IN`) whose first
/// parameter is the row type of a relation of the same schema, returning one value (not a set:
/// a set of another table's rows would be an embedding, not a field). The same schema because
/// PostgREST finds them through the request's `search_path`, which is the relation's schema.
/// Pseudo-type results (`void`, `record`, `trigger`) have no value a field could show.
const COMPUTED: &str = "\
    SELECT c.oid, n.nspname::text, p.proname::text, p.prorettype, \
           pg_catalog.format_type(p.prorettype, NULL), \
           pg_catalog.format_type(coalesce(nullif(t.typbasetype, 0), p.prorettype), NULL), \
           pg_catalog.obj_description(p.oid, 'pg_proc') \
    FROM pg_catalog.pg_proc p \
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
    JOIN pg_catalog.pg_class c ON c.reltype = p.proargtypes[0] AND c.relnamespace = n.oid \
    JOIN pg_catalog.pg_type t ON t.oid = p.prorettype \
    WHERE n.nspname = ANY($1::text[]) AND p.prokind = 'f' AND NOT p.proretset \
      AND p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1 \
      AND p.proallargtypes IS NULL AND p.provariadic = 0 AND t.typtype <> 'p' \
      AND c.relkind IN ('r', 'v', 'm', 'f', 'p') \
    ORDER BY n.nspname, p.proname, p.oid";

/// Adds to the relations of `cache` (found by OID in `by_oid`) their computed fields; `list` is
/// the exposed schemas as an array literal.
pub(super) async fn load(
    conn: &mut Connection,
    list: &str,
    by_oid: &HashMap<u32, QualifiedName>,
    cache: &mut SchemaCache,
) -> Result<(), sluice_pg::Error> {
    let rows = conn.query(COMPUTED, &[&list]).await?;
    for row in rows.iter() {
        let oid: u32 = row.get(0)?;
        let Some(table) = by_oid.get(&oid).and_then(|n| cache.tables.get_mut(n)) else {
            continue;
        };
        let function = QualifiedName::new(row.get::<&str>(1)?, row.get::<&str>(2)?);
        // A column of the same name hides the function in `row.name`; two overloads over the
        // same row type (differing in defaulted parameters) are one name to a request.
        if table.column(&function.name).is_some()
            || table
                .computed
                .iter()
                .any(|c| c.column.name == function.name)
        {
            continue;
        }
        let mut column = super::quick::result_column(
            function.name.clone(),
            row.get(3)?,
            row.get::<&str>(4)?.to_string(),
        );
        column.base_type_name = row.get::<&str>(5)?.to_string();
        column.description = row.get::<Option<String>>(6)?;
        table.computed.push(ComputedField {
            function,
            row_type: table.name.clone(),
            column,
        });
    }
    Ok(())
}
