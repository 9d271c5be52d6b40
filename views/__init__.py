"""The page's views, one module each, and what they share; streamlit_app.py reads the configuration and routes
the address to them. Layout only: like the page, they call search/ for every decision about papers.

- address.py: the page's state in its address (go, url_setting, the reading list's ids, sidebar widgets' sync)
- cards.py: the cards component (declared once, here) and its actions
- build.py: the engine served (loaded once a server), the background build and its progress, the fetch offer
- query.py: the search view: the box, its hits, the decision notes
- hits.py: a list of hits as cards, and the fared and where panels under it (search, paper, uploads, reading list)
- uploads.py: papers like uploaded abstracts or a .bib
- paper.py: a paper (its reviews and rating history) and an author
- map.py: the map and a topic's page
- stats.py: the statistics
- changes.py: what changed since the previous fetch
- reading_list.py: the reading list
- sidebar.py: the ranking, the filters' widgets, the sort, the saved searches
"""
