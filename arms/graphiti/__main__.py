"""`python -m arms.graphiti [--host H] [--port P]`: serve the Graphiti engine arm over the seam."""

from arms.graphiti import GraphitiArm
from arms.server import main

if __name__ == "__main__":
    main(GraphitiArm)
