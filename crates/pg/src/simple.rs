//! The simple query protocol: one or more `;`-separated statements in one message, text results.

use crate::conn::Connection;
use crate::error::Result;
use crate::protocol::backend::Message;
use crate::protocol::frontend;
use crate::rows::{Column, Columns, CommandTag, Rows};

impl Connection {
    /// Runs one or more `;`-separated statements with the simple query protocol and returns one
    /// result per statement (rows in text format, with its command tag). Without parameters;
    /// statements run in one implicit transaction unless they manage their own.
    pub async fn simple_query(&mut self, sql: &str) -> Result<Vec<Rows>> {
        let prelude = self.begin_request().await?;
        frontend::query(sql, &mut self.io.write)?;
        self.send_request(prelude, 1).await?;
        let mut results = Vec::new();
        let mut columns: Columns = Columns::from(Vec::new());
        let mut blocks = Vec::new();
        let mut error = None;
        loop {
            if let Some(block) = self.take_block(&columns, 0)? {
                blocks.push(block);
                continue;
            }
            let (tag, len) = self.next_message().await?;
            match tag {
                b'D' => {}
                b'T' => {
                    let Message::RowDescription(rd) = self.parse_front(tag, len)? else {
                        return Err(self.unexpected("instead of RowDescription", tag));
                    };
                    columns = rd.fields().map(|f| Column::from_description(&f, f.format)).collect();
                    self.io.consume(len);
                }
                b'C' => {
                    let Message::CommandComplete { tag: text } = self.parse_front(tag, len)? else {
                        return Err(self.unexpected("instead of CommandComplete", tag));
                    };
                    let command = CommandTag::new(text);
                    self.io.consume(len);
                    self.on_command_complete(command.as_str());
                    let done = std::mem::replace(&mut columns, Columns::from(Vec::new()));
                    results.push(Rows::new(done, std::mem::take(&mut blocks), command));
                }
                b'I' => self.io.consume(len),
                b'E' => error = Some(self.take_error(len)?),
                b'Z' => {
                    self.take_ready(len)?;
                    break;
                }
                b'G' | b'H' | b'W' => return Err(self.reject_copy(tag, len).await),
                _ => return Err(self.unexpected("in a simple query's results", tag)),
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(results),
        }
    }
}
