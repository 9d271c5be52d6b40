"""Reading a venue from OpenReview: the official client as the real service behaves (`api`), the download into
a resumable file published whole (`fetch`), and a note as the record the build reads (`records`)."""
