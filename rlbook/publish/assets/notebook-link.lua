-- Quarto filter (see _quarto.yml): a "Download this chapter as a notebook"
-- link under the title of every page that has code cells.
--
-- The link points at notebooks/<page>.ipynb in the site. `rlbook build`
-- executes each page into _build/notebooks/<page>.ipynb and copies those
-- notebooks into _book/notebooks/; a page whose notebook has not been built
-- gets no link, so a plain `quarto render` never links to a missing file.
--
-- The notebooks are copied in after Quarto has rendered the pages, so Quarto
-- would warn that it cannot resolve the link ("Unable to resolve link
-- target"); the data-noresolveinput attribute tells it to leave the link as
-- it is.

local function exists(path)
  local file = io.open(path, "r")
  if file then
    file:close()
    return true
  end
  return false
end

local function has_code_cells(doc)
  local found = false
  doc:walk({
    Div = function(div)
      if div.classes:includes("cell") then
        found = true
      end
    end,
  })
  return found
end

function Pandoc(doc)
  if not quarto.doc.is_format("html") then
    return doc
  end
  local input = quarto.doc.input_file
  local project = quarto.project.directory
  if input == nil or project == nil then
    return doc
  end
  local relative = pandoc.path.make_relative(input, project)
  local stem = pandoc.path.split_extension(pandoc.path.filename(relative))
  local built = pandoc.path.join({ project, "_build", "notebooks", stem .. ".ipynb" })
  if not exists(built) or not has_code_cells(doc) then
    return doc
  end
  local _, depth = relative:gsub("/", "")
  local href = string.rep("../", depth) .. "notebooks/" .. stem .. ".ipynb"
  local link = pandoc.Para({
    pandoc.Link("Download this chapter as a notebook", href, "",
      pandoc.Attr("", { "notebook-download" }, { { "download", "" }, { "data-noresolveinput", "" } })),
  })
  local position = 1
  for i, block in ipairs(doc.blocks) do
    if block.t == "Header" and block.level == 1 then
      position = i + 1
      break
    end
  end
  doc.blocks:insert(position, link)
  return doc
end
