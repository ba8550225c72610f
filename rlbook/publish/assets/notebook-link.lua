-- Quarto filter (see _quarto.yml): a "Download this chapter as a notebook"
-- link under the title of every page that has code cells and whose notebook
-- is in the site.
--
-- The link points at notebooks/<page>.ipynb in the site. Quarto makes no such
-- file. The pre-render step (rlbook/publish/prerender.py, which Quarto runs
-- before any page, and which `rlbook build --backend quarto` also relies on)
-- copies into the output folder's notebooks/ the notebooks an earlier build
-- or render left; the post-render step (rlbook/publish/postrender.py) writes
-- the notebook of each page Quarto has just executed, from the notebook Quarto
-- kept beside the page (<page>.quarto_ipynb, execute: keep-ipynb). The filter
-- links a page only when its notebook is in the site or Quarto has kept the
-- notebook it executed the page in (the pre-render step deletes those left by
-- a render that stopped), so no render ever links to a file the site will not
-- have.
--
-- Quarto does not render the notebooks, so it would warn that it cannot
-- resolve the link ("Unable to resolve link target"); the
-- data-noresolveinput attribute tells it to leave the link as it is.

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
  local site = quarto.project.output_directory
  if input == nil or project == nil or site == nil then
    return doc
  end
  local relative = pandoc.path.make_relative(input, project)
  local stem = pandoc.path.split_extension(pandoc.path.filename(relative))
  local published = pandoc.path.join({ site, "notebooks", stem .. ".ipynb" })
  local kept = pandoc.path.join({ pandoc.path.directory(input), stem .. ".quarto_ipynb" })
  if not (exists(published) or exists(kept)) or not has_code_cells(doc) then
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
