"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.exceptions import LowRecallWarning as LowRecallWarning
from fastgssl.graphs._builders import EpsilonGraph as EpsilonGraph
from fastgssl.graphs._builders import KNNGraph as KNNGraph
from fastgssl.graphs._builders import PrecomputedGraph as PrecomputedGraph
from fastgssl.graphs._builders import check_adjacency as check_adjacency
from fastgssl.graphs._builders import epsilon_graph as epsilon_graph
from fastgssl.graphs._builders import knn_adjacency as knn_adjacency
from fastgssl.graphs._builders import knn_graph as knn_graph
from fastgssl.graphs._graph import Graph as Graph
from fastgssl.graphs._ivf import IVFGraph as IVFGraph
from fastgssl.graphs._ivf import default_n_lists as default_n_lists
from fastgssl.graphs._knn import knn_search as knn_search
from fastgssl.graphs._knn import reuse_neighbors as reuse_neighbors
from fastgssl.graphs._nndescent import NNDescentGraph as NNDescentGraph
from fastgssl.graphs._nndescent import knn_recall as knn_recall
from fastgssl.graphs._resolve import resolve_graph as resolve_graph
from fastgssl.graphs._resolve import resolve_graph_value as resolve_graph_value
