"""Publishing the book: executing the chapters (build), the pandoc site (html), the book lint (lint) and the
site's assets."""
