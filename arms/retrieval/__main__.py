"""`python -m arms.retrieval [--host H] [--port P]`: serve the retrieval arm over the seam."""

from arms.retrieval import RetrievalArm
from arms.server import main

if __name__ == "__main__":
    main(RetrievalArm)
