-- Headless Neovim attaches `tinker-lint server` to a file with its own LSP client and writes the
-- diagnostics it received as JSON. The caller sets PYTHON, ROOT_DIR, FILE and OUT above this.
-- vim.lsp.start_client + buf_attach_client work from Neovim 0.7 (Debian 12's); 0.8's
-- vim.lsp.start and 0.11's vim.lsp.config wrap them (docs/server.md).
local client = vim.lsp.start_client({
  name = "tinker-lint",
  cmd = { PYTHON, "-m", "tinker_lint", "server", "--stdio" },
  root_dir = ROOT_DIR,
})
vim.cmd("edit " .. FILE)
vim.lsp.buf_attach_client(0, client)
vim.wait(30000, function() return #vim.diagnostic.get(0) >= EXPECTED end, 50)
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  table.insert(found, { code = code, lnum = d.lnum, col = d.col, end_col = d.end_col,
                        severity = d.severity, source = d.source })
end
local out = io.open(OUT, "w")
out:write(vim.fn.json_encode(found))
out:close()
vim.cmd("qa!")
