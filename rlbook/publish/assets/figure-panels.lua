-- Quarto filter (see _quarto.yml, which runs it before Quarto reads figures: `at: pre-ast`): a figure cell
-- that draws several panels is one figure with one caption, its panels side by side, as on the pandoc site.
--
-- A cell labelled fig-x whose code shows several images comes out of Quarto's Jupyter engine as one output
-- per image, the first with the whole fig-cap as its own caption and each with an id fig-x-1, fig-x-2, ...
-- Quarto would read these as sub-figures (a), (b), (c) stacked in a column, the caption on (a) alone and
-- the figure itself captioned only "Figure 1.2". Here the images lose their ids, so that they are not
-- sub-figures, and go into one output block (class rlbook-panels, laid out by quarto.scss); the caption
-- becomes the cell's last paragraph, which Quarto takes as the caption of the whole figure. The fig-alt
-- describes the whole figure: the first image keeps it, and each other one is named by its place, "Panel 2 of
-- 4 (described with panel 1)", so that a screen reader reads the description once (as on the pandoc site,
-- rlbook.publish.page.build_figures). A cell with one image is left to Quarto, and so is one with fig-subcap,
-- which Quarto's engine writes as a caption on more than one panel, or as panel captions and the whole caption
-- after them.

local function escaped(text)
  return (text:gsub("%p", "%%%0"))
end

-- The image of an output block that holds one panel of figure `id`, and the panel's caption (or nil).
local function panel(block, id)
  if block.t ~= "Div" or not block.classes:includes("cell-output-display") or #block.content ~= 1 then
    return nil
  end
  local pattern = "^" .. escaped(id) .. "%-%d+$"
  local inner = block.content[1]
  local caption = nil
  if inner.t == "Figure" and inner.identifier:match(pattern) and #inner.content == 1 then
    caption = inner.caption.long
    inner = inner.content[1]
  end
  if (inner.t ~= "Para" and inner.t ~= "Plain") or #inner.content ~= 1 or inner.content[1].t ~= "Image" then
    return nil
  end
  local image = inner.content[1]
  if caption == nil and not image.identifier:match(pattern) then
    return nil
  end
  return image, caption
end

function Div(div)
  if not div.identifier:match("^fig%-") or not div.classes:includes("cell") then
    return nil
  end
  local images, captions, first, panels_at = {}, {}, nil, {}
  for i, block in ipairs(div.content) do
    local image, own = panel(block, div.identifier)
    if image then
      first = first or i
      panels_at[i] = true
      table.insert(images, image)
      if own then
        table.insert(captions, own)
      end
    end
  end
  local last = div.content[#div.content]
  if #images < 2 or #captions ~= 1 or (last and last.t == "Para") then
    return nil
  end
  local caption = captions[1]
  local content = pandoc.Blocks({})
  for i, block in ipairs(div.content) do
    if i == first then
      local panels = pandoc.Blocks({})
      for place, image in ipairs(images) do
        image.identifier = ""
        image.caption = {}
        if place > 1 then
          image.attributes["fig-alt"] = "Panel " .. place .. " of " .. #images .. " (described with panel 1)"
        end
        panels:insert(pandoc.Plain({ image }))
      end
      content:insert(pandoc.Div(panels, pandoc.Attr("", { "cell-output", "cell-output-display", "rlbook-panels" })))
    elseif not panels_at[i] then
      content:insert(block)
    end
  end
  content:insert(pandoc.Para(pandoc.utils.blocks_to_inlines(caption)))
  div.content = content
  return div
end
