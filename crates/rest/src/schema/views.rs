//! Where a view's columns come from: the base-table column each one shows, read from the stored
//! query tree of the view's rule (`pg_rewrite.ev_action`) and followed through views to tables,
//! so that views take part in relationships through the keys of the tables they show.

use std::collections::HashMap;

/// A column of a relation: its `pg_class` oid and `attnum`.
pub type ColumnRef = (u32, i16);

/// The origins of a view's columns that show a column of another relation as it is: `(view
/// column number, origin)`, as the parser marked them in the top query's target list
/// (`resorigtbl`, `resorigcol`; computed or constant columns have none).
pub fn column_origins(tree: &str) -> Vec<(i16, ColumnRef)> {
    let mut tokens = Tokens { text: tree, at: 0 };
    let mut out = Vec::new();
    // The rule's actions: a list holding the view's query.
    if tokens.next() != Some("(") || tokens.next() != Some("{") || tokens.next() != Some("QUERY") {
        return out;
    }
    while let Some(token) = tokens.next() {
        match token {
            "}" => break,
            ":targetList" => {
                target_list(&mut tokens, &mut out);
                break;
            }
            "{" | "(" => tokens.skip_open(),
            _ => {}
        }
    }
    out
}

/// The entries of a target list (`({TARGETENTRY ...} ...)` or `<>`).
fn target_list(tokens: &mut Tokens<'_>, out: &mut Vec<(i16, ColumnRef)>) {
    if tokens.next() != Some("(") {
        return;
    }
    while let Some(token) = tokens.next() {
        match token {
            ")" => return,
            "{" => {
                if let Some(entry) = target_entry(tokens) {
                    out.push(entry);
                }
            }
            "(" => tokens.skip_open(),
            _ => {}
        }
    }
}

/// One `{TARGETENTRY ...}` (its `{` read): its number and origin, unless it has none or is a
/// junk column (not one of the view's).
fn target_entry(tokens: &mut Tokens<'_>) -> Option<(i16, ColumnRef)> {
    let (mut resno, mut table, mut column, mut junk) = (None, None, None, false);
    while let Some(token) = tokens.next() {
        match token {
            "}" => break,
            ":resno" => resno = tokens.next().and_then(|t| t.parse::<i16>().ok()),
            ":resorigtbl" => table = tokens.next().and_then(|t| t.parse::<u32>().ok()),
            ":resorigcol" => column = tokens.next().and_then(|t| t.parse::<i16>().ok()),
            ":resjunk" => junk = tokens.next() == Some("true"),
            "{" | "(" => tokens.skip_open(),
            _ => {}
        }
    }
    match (resno, table, column) {
        (Some(resno), Some(table), Some(column)) if table != 0 && column > 0 && !junk => {
            Some((resno, (table, column)))
        }
        _ => None,
    }
}

/// The tokens of a node tree as PostgreSQL's reader splits them: whitespace separates, each of
/// `(){}` is a token of its own, and a backslash makes the next character part of the token.
struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        while bytes.get(self.at).is_some_and(|b| b" \n\t".contains(b)) {
            self.at += 1;
        }
        let start = self.at;
        match bytes.get(self.at)? {
            b'(' | b')' | b'{' | b'}' => self.at += 1,
            _ => {
                while let Some(&b) = bytes.get(self.at) {
                    if b" \n\t(){}".contains(&b) {
                        break;
                    }
                    // An escaped character (a multi-byte one ends with its continuation bytes,
                    // which the loop takes as ordinary ones).
                    self.at += if b == b'\\' { 2 } else { 1 };
                }
                self.at = self.at.min(bytes.len());
            }
        }
        self.text.get(start..self.at)
    }

    /// Skips to the end of the node or list whose opening token was just read.
    fn skip_open(&mut self) {
        let mut depth = 1usize;
        while depth > 0 {
            match self.next() {
                Some("{" | "(") => depth += 1,
                Some("}" | ")") => depth -= 1,
                Some(_) => {}
                None => return,
            }
        }
    }
}

/// A view's rule and columns as the catalog holds them.
pub struct ViewRule {
    /// Its columns' names by number.
    pub columns: HashMap<i16, String>,
    /// Its columns' origins ([`column_origins`]).
    pub origins: Vec<(i16, ColumnRef)>,
}

/// How deep views over views are followed (the catalog forbids cycles; this bounds the work).
const MAX_DEPTH: usize = 32;

/// For each view, the columns it shows of relations that are not views (followed through the
/// views it selects from): `(view column name, base column)`, in the view's column order.
pub fn trace(views: &HashMap<u32, ViewRule>) -> HashMap<u32, Vec<(String, ColumnRef)>> {
    let mut traced = HashMap::new();
    for (&oid, view) in views {
        let mut columns = Vec::new();
        let mut origins = view.origins.clone();
        origins.sort_by_key(|(resno, _)| *resno);
        for (resno, origin) in origins {
            let Some(name) = view.columns.get(&resno) else {
                continue;
            };
            if let Some(base) = follow(views, origin) {
                columns.push((name.clone(), base));
            }
        }
        traced.insert(oid, columns);
    }
    traced
}

/// The base column behind `origin`, following views; none when a view on the way computes it.
fn follow(views: &HashMap<u32, ViewRule>, mut origin: ColumnRef) -> Option<ColumnRef> {
    for _ in 0..MAX_DEPTH {
        let Some(view) = views.get(&origin.0) else {
            return Some(origin);
        };
        origin = view
            .origins
            .iter()
            .find(|(resno, _)| *resno == origin.1)
            .map(|(_, next)| *next)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule's tree as PostgreSQL stores it for
    /// `CREATE VIEW v AS SELECT id AS "the id", (SELECT 1) AS one, name FROM t ORDER BY name`,
    /// shortened, with a subquery in the target list whose own target list must not count.
    const TREE: &str = r#"({QUERY :commandType 1 :querySource 0 :canSetTag true :utilityStmt <>
      :resultRelation 0 :hasAggs false :cteList <> :rtable ({RTE :alias <> :eref {ALIAS
      :aliasname t :colnames ("id" "name\ \{x\}")} :rtekind 0 :relid 16384 :relkind r})
      :jointree {FROMEXPR :fromlist ({RANGETBLREF :rtindex 1}) :quals <>} :mergeActionList <>
      :targetList ({TARGETENTRY :expr {VAR :varno 1 :varattno 1 :vartype 23} :resno 1
      :resname the\ id :ressortgroupref 0 :resorigtbl 16384 :resorigcol 1 :resjunk false}
      {TARGETENTRY :expr {SUBLINK :subLinkType 4 :subselect {QUERY :commandType 1 :targetList
      ({TARGETENTRY :expr {CONST :consttype 23 :constvalue 4 [ 1 0 0 0 0 0 0 0 ]} :resno 1
      :resname \?column\? :resorigtbl 16999 :resorigcol 7 :resjunk false})}} :resno 2
      :resname one :ressortgroupref 0 :resorigtbl 0 :resorigcol 0 :resjunk false}
      {TARGETENTRY :expr {VAR :varno 1 :varattno 2 :vartype 25} :resno 3 :resname name
      :ressortgroupref 1 :resorigtbl 16384 :resorigcol 2 :resjunk false}
      {TARGETENTRY :expr {VAR :varno 1 :varattno 3} :resno 4 :resname sorter
      :resorigtbl 16384 :resorigcol 3 :resjunk true}) :override 0 :sortClause <>})"#;

    #[test]
    fn the_top_target_list_names_the_origins() {
        assert_eq!(column_origins(TREE), vec![(1, (16384, 1)), (3, (16384, 2))]);
    }

    #[test]
    fn trees_without_a_query_or_targets_have_no_origins() {
        assert!(column_origins("").is_empty());
        assert!(column_origins("({QUERY :commandType 1 :targetList <>})").is_empty());
        assert!(column_origins("({QUERY :targetList ({TARGETENTRY :resno").is_empty());
        assert!(column_origins("({QUERY :x \\").is_empty());
    }

    #[test]
    fn views_over_views_reach_the_table() {
        let view = |names: &[(i16, &str)], origins: Vec<(i16, ColumnRef)>| ViewRule {
            columns: names.iter().map(|(n, s)| (*n, s.to_string())).collect(),
            origins,
        };
        let mut views = HashMap::new();
        // 20 shows table 10's columns 2 and 1 as its 1 and 2; 30 shows 20's 2 and a computed 1.
        views.insert(
            20,
            view(&[(1, "b"), (2, "a")], vec![(1, (10, 2)), (2, (10, 1))]),
        );
        views.insert(
            30,
            view(&[(1, "x"), (2, "y")], vec![(2, (20, 2)), (1, (20, 9))]),
        );
        let traced = trace(&views);
        assert_eq!(
            traced[&20],
            vec![("b".to_string(), (10, 2)), ("a".to_string(), (10, 1))]
        );
        assert_eq!(traced[&30], vec![("y".to_string(), (10, 1))]);
    }
}
