-- A patch's identity, second version (bundle spec §5b, after a review's rewrites of one
-- patch escaped it): files named as `-p1` finds them, whatever a header's prefix; a
-- file's removed and added lines as two lists, in their order, less the lines removed
-- and added back; one file's sections as one change. The identities recorded so far are
-- the first version's: they go, and the server computes each again from its blob when it
-- starts, as for a patch stored before identities were.
DELETE FROM patch_identities;
