-- pandoc Lua filter for benchmarks/make_pdfs.py: turn pandoc's JATS reading into journal-style LaTeX that
-- builds in two columns (no longtable), with figures as captioned boxes and tables as captioned floats.

local function esc(s)
  s = s:gsub("\\", "\\textbackslash{}")
  s = s:gsub("([&%%$#_{}])", "\\%1")
  s = s:gsub("~", "\\textasciitilde{}")
  s = s:gsub("%^", "\\textasciicircum{}")
  return s
end

-- numbered headings come from LaTeX: drop the article's own "1." / "2.3" numbering from the heading text
function Header(h)
  local first = h.content[1]
  if first and first.t == "Str" and first.text:match("^[0-9]+[.0-9]*%.?$") then
    h.content:remove(1)
    if h.content[1] and h.content[1].t == "Space" then h.content:remove(1) end
  end
  return h
end

function Image(img)
  return pandoc.RawInline("latex", "\\fbox{\\parbox[c][6em][c]{0.9\\linewidth}{\\centering }}")
end

local function cells_text(row)
  local out = {}
  for _, cell in ipairs(row.cells) do
    out[#out + 1] = esc(pandoc.utils.stringify(cell.contents))
  end
  return out
end

local function table_tex(tbl, caption)
  local rows = {}
  for _, r in ipairs(tbl.head.rows or {}) do rows[#rows + 1] = cells_text(r) end
  for _, body in ipairs(tbl.bodies or {}) do
    for _, r in ipairs(body.body or {}) do rows[#rows + 1] = cells_text(r) end
  end
  local ncol = 1
  for _, r in ipairs(rows) do if #r > ncol then ncol = #r end end
  if ncol > 8 then ncol = 8 end
  local lines = {}
  for i, r in ipairs(rows) do
    if i > 20 then break end
    local cells = {}
    for c = 1, ncol do cells[c] = r[c] or "" end
    lines[#lines + 1] = table.concat(cells, " & ") .. " \\\\"
  end
  local width = string.format("%.3f", 0.95 / ncol)
  local spec = string.rep("p{" .. width .. "\\textwidth}", ncol)
  local tex = "\\begin{table*}[tp]\\centering\\caption{" .. caption .. "}\\scriptsize\n\\begin{tabular}{" .. spec ..
      "}\\hline\n" .. table.concat(lines, "\n") .. "\n\\hline\\end{tabular}\\end{table*}"
  return pandoc.RawBlock("latex", tex)
end

function Table(tbl)
  return table_tex(tbl, esc(pandoc.utils.stringify(tbl.caption.long or {})))
end

-- a JATS <table-wrap>: its caption sits in a Div beside the table; make both one captioned float
function Div(div)
  if not div.classes:includes("table-wrap") then return nil end
  local caption, tbl = "", nil
  for _, b in ipairs(div.content) do
    if b.t == "Div" and b.classes:includes("caption") then
      caption = esc(pandoc.utils.stringify(b.content))
    elseif b.t == "Table" then
      tbl = b
    end
  end
  if tbl == nil then return nil end
  return table_tex(tbl, caption)
end

-- TeX math that is a whole LaTeX document (some JATS <tex-math> carry one) cannot sit inside another
function Math(m)
  if m.text:find("documentclass", 1, true) then return pandoc.Str("(formula)") end
  return nil
end

-- table-wraps first (while their Table is still a Table), then everything else
return {{Div = Div}, {Header = Header, Image = Image, Table = Table, Math = Math}}
